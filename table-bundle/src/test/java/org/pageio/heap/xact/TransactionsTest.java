package org.pageio.heap.xact;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transaction ids and the commit log on real files: ids never handed out twice across restarts
 * (a new instance on the same directory is a restart after a crash: nothing of the old one's
 * memory survives), commits durable at clog.c's bytes, an id left running reading as aborted.
 */
class TransactionsTest {

    @TempDir
    Path dir;

    @Test
    void idsStartAtFirstNormalAndAreReservedInTheControlFileBeforeUse() throws Exception {
        Transactions x = new Transactions(dir);
        assertEquals(3, x.assign());
        assertEquals(4, x.assign());
        assertEquals("next_xid_limit=" + (3 + Transactions.XID_PREFETCH), Files.readString(dir.resolve("pg_xid_control")).strip());
        for (int i = 5; i < 3 + Transactions.XID_PREFETCH; i++) {
            assertEquals(i, x.assign());
        }
        assertEquals("next_xid_limit=" + (3 + Transactions.XID_PREFETCH), Files.readString(dir.resolve("pg_xid_control")).strip());
        assertEquals(3 + Transactions.XID_PREFETCH, x.assign(), "the next range is reserved first");
        assertEquals("next_xid_limit=" + (3 + 2 * Transactions.XID_PREFETCH),
                Files.readString(dir.resolve("pg_xid_control")).strip());
    }

    @Test
    void aRestartNeverHandsOutAnIdTwice() throws Exception {
        Set<Integer> seen = new HashSet<>();
        for (int restart = 0; restart < 4; restart++) {
            Transactions x = new Transactions(dir); // the previous instance "crashed": nothing of it but its files
            for (int i = 0; i < 700; i++) {
                int xid = x.assign();
                assertTrue(xid >= Transactions.FIRST_NORMAL_XID);
                assertTrue(seen.add(xid), "xid " + xid + " handed out twice (restart " + restart + ")");
                if (i % 2 == 0) {
                    x.commit(xid);
                }
            }
        }
    }

    @Test
    void aCommitIsOnDiskAtClogBytesAndAnUncommittedIdReadsAsAbortedAfterARestart() throws Exception {
        Transactions x = new Transactions(dir);
        int committed = x.assign(); // 3
        int aborted = x.assign();   // 4
        int running = x.assign();   // 5
        int later = x.assign();     // 6
        x.commit(committed);
        x.abort(aborted);
        assertEquals(Transactions.COMMITTED, x.status(committed));
        assertEquals(Transactions.ABORTED, x.status(aborted));
        assertEquals(Transactions.IN_PROGRESS, x.status(running));
        assertEquals(Transactions.IN_PROGRESS, x.status(later));
        // pg_xact/0000: xids 4..7 in byte 1, two bits each from bit 0; xid 3 in byte 0 bits 6..7
        byte[] clog = Files.readAllBytes(dir.resolve("pg_xact").resolve("0000"));
        assertEquals(Transactions.COMMITTED << 6, clog[0] & 0xFF);
        assertEquals(Transactions.ABORTED, clog[1] & 0x03, "xid 4 aborted");
        assertEquals(0, (clog[1] >> 2) & 0x03, "xid 5 in progress on disk");

        Transactions after = new Transactions(dir);
        assertEquals(Transactions.COMMITTED, after.status(committed));
        assertEquals(Transactions.ABORTED, after.status(aborted));
        assertEquals(Transactions.ABORTED, after.status(running), "running at the crash: aborted");
        assertEquals(Transactions.ABORTED, after.status(later));
        assertEquals(Transactions.COMMITTED, after.status(Transactions.FROZEN_XID));
        assertTrue(after.assign() > later);
        assertThrows(IllegalStateException.class, () -> after.commit(running), "not this instance's to commit");
    }

    @Test
    void aSnapshotSeesOnlyWhatCommittedBeforeIt() throws Exception {
        Transactions x = new Transactions(dir);
        int a = x.assign();
        int b = x.assign();
        x.commit(a);
        Snapshot before = x.snapshot();
        int c = x.assign();
        x.commit(b);
        x.commit(c);
        assertTrue(before.committedBefore(a));
        assertFalse(before.committedBefore(b), "running when the snapshot was taken");
        assertFalse(before.committedBefore(c), "assigned after it");
        Snapshot now = x.snapshot();
        assertTrue(now.committedBefore(b) && now.committedBefore(c));
    }

    @Test
    void aDamagedControlFileIsRefusedNamingIt() throws Exception {
        Files.writeString(dir.resolve("pg_xid_control"), "garbage\n");
        IOException e = assertThrows(IOException.class, () -> new Transactions(dir));
        assertTrue(e.getMessage().contains("pg_xid_control") && e.getMessage().contains("next_xid_limit"), e.getMessage());
    }
}
