package org.pageio.heap.xact;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.heap.HeapPage;

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
        try (Snapshot before = x.snapshot()) {
            int c = x.assign();
            x.commit(b);
            x.commit(c);
            assertTrue(before.committedBefore(a));
            assertFalse(before.committedBefore(b), "running when the snapshot was taken");
            assertFalse(before.committedBefore(c), "assigned after it");
            try (Snapshot now = x.snapshot()) {
                assertTrue(now.committedBefore(b) && now.committedBefore(c));
            }
        }
    }

    @Test
    void theHorizonIsTheOldestXminOfOpenSnapshotsAndRunningIds() throws Exception {
        Transactions x = new Transactions(dir);
        assertEquals(x.nextXid(), x.oldestXmin(), "nothing running, nothing open: nextXid");
        int a = x.assign(); // 3
        int b = x.assign(); // 4
        assertEquals(a, x.oldestXmin(), "the lowest running id");
        Snapshot s = x.snapshot();
        assertEquals(a, s.xmin(), "the lowest id running when it was taken");
        assertEquals(5, s.xmax());
        x.commit(a);
        x.commit(b);
        assertEquals(a, x.oldestXmin(), "the open snapshot still needs what was running for it");
        assertEquals(1, x.openSnapshots());
        Snapshot idle = x.snapshot();
        assertEquals(5, idle.xmin(), "none running: its xmax");
        s.close();
        assertEquals(5, x.oldestXmin());
        s.close(); // idempotent
        assertEquals(1, x.openSnapshots());
        int c = x.assign(); // 5
        x.commit(c);
        assertEquals(5, x.oldestXmin(), "held back by the idle snapshot");
        idle.close();
        assertEquals(6, x.oldestXmin());
        assertEquals(0, x.openSnapshots());
        VacuumCutoffs plain = VacuumCutoffs.of(x, false);
        assertEquals(6, plain.oldestXmin());
        assertEquals(0, plain.freezeLimit(), "freeze nothing unless VACUUM FREEZE");
        assertEquals(6, x.vacuumCutoffs(true).freezeLimit(), "VACUUM FREEZE: FreezeLimit = OldestXmin");
    }

    /** One tuple per case on an off-heap page: t_xmin, t_xmax and t_infomask as a change leaves them. */
    private static int tuple(MemorySegment page, int xmin, int xmax, int infomask) {
        int off = HeapPage.addTuple(page, 0, 32, 1);
        HeapPage.setXmin(page, off, xmin);
        HeapPage.setXmax(page, off, xmax);
        HeapPage.setInfomask(page, off, infomask);
        return off;
    }

    @Test
    void satisfiesVacuumJudgesEachTupleAgainstOldestXmin() throws Exception {
        Transactions x = new Transactions(dir);
        int committed = x.assign();
        int aborted = x.assign();
        int crashed = new Transactions(dir).assign(); // handed out by an instance that then stopped
        int running = x.assign();
        x.commit(committed);
        x.abort(aborted);
        Snapshot old = x.snapshot(); // running is running for it
        int late = x.assign();
        x.commit(late);
        int xmaxInvalid = Snapshot.HEAP_XMAX_INVALID;
        int frozen = Snapshot.HEAP_XMIN_FROZEN;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(8192, 8);
            HeapPage.init(page);
            VacuumCutoffs v = VacuumCutoffs.of(x, false);
            assertEquals(running, v.oldestXmin(), "the lowest running id holds the horizon");
            assertEquals(VacuumCutoffs.HEAPTUPLE_LIVE, v.satisfiesVacuum(page, tuple(page, 2, 0, frozen | xmaxInvalid)));
            assertEquals(VacuumCutoffs.HEAPTUPLE_LIVE, v.satisfiesVacuum(page, tuple(page, committed, 0, xmaxInvalid)));
            assertEquals(VacuumCutoffs.HEAPTUPLE_DEAD, v.satisfiesVacuum(page, tuple(page, aborted, 0, xmaxInvalid)),
                    "an aborted inserter");
            assertEquals(VacuumCutoffs.HEAPTUPLE_DEAD, v.satisfiesVacuum(page, tuple(page, crashed, 0, xmaxInvalid)),
                    "an inserter stopped by a crash");
            assertEquals(VacuumCutoffs.HEAPTUPLE_DEAD, v.satisfiesVacuum(page,
                    tuple(page, committed, 0, Snapshot.HEAP_XMIN_INVALID | xmaxInvalid)), "hinted aborted");
            assertEquals(VacuumCutoffs.HEAPTUPLE_INSERT_IN_PROGRESS, v.satisfiesVacuum(page, tuple(page, running, 0, xmaxInvalid)));
            assertEquals(VacuumCutoffs.HEAPTUPLE_DELETE_IN_PROGRESS, v.satisfiesVacuum(page, tuple(page, running, running, 0)),
                    "inserted and deleted by the same running transaction");
            assertEquals(VacuumCutoffs.HEAPTUPLE_DEAD, v.satisfiesVacuum(page, tuple(page, 2, committed, frozen)),
                    "deleted by a transaction that committed below OldestXmin");
            assertEquals(VacuumCutoffs.HEAPTUPLE_RECENTLY_DEAD, v.satisfiesVacuum(page, tuple(page, 2, late, frozen)),
                    "deleted after the horizon: a snapshot may still see it");
            assertEquals(VacuumCutoffs.HEAPTUPLE_RECENTLY_DEAD, v.satisfiesVacuum(page,
                    tuple(page, 2, late, frozen | Snapshot.HEAP_XMAX_COMMITTED)), "hinted committed deleter");
            assertEquals(VacuumCutoffs.HEAPTUPLE_DELETE_IN_PROGRESS, v.satisfiesVacuum(page, tuple(page, 2, running, frozen)));
            assertEquals(VacuumCutoffs.HEAPTUPLE_LIVE, v.satisfiesVacuum(page, tuple(page, 2, aborted, frozen)), "deleter aborted");
            assertEquals(VacuumCutoffs.HEAPTUPLE_LIVE, v.satisfiesVacuum(page, tuple(page, 2, crashed, frozen)), "deleter crashed");
            assertEquals(VacuumCutoffs.HEAPTUPLE_LIVE, v.satisfiesVacuum(page,
                    tuple(page, 2, running, frozen | Snapshot.HEAP_XMAX_LOCK_ONLY)), "a row lock is not a delete");

            x.commit(running);
            old.close();
            VacuumCutoffs after = VacuumCutoffs.of(x, false);
            assertEquals(x.nextXid(), after.oldestXmin());
            assertEquals(VacuumCutoffs.HEAPTUPLE_DEAD, after.satisfiesVacuum(page, tuple(page, 2, late, frozen)),
                    "once no snapshot can see it");
            assertEquals(VacuumCutoffs.HEAPTUPLE_LIVE, after.satisfiesVacuum(page, tuple(page, running, 0, xmaxInvalid)));
        }
    }

    @Test
    void aDamagedControlFileIsRefusedNamingIt() throws Exception {
        Files.writeString(dir.resolve("pg_xid_control"), "garbage\n");
        IOException e = assertThrows(IOException.class, () -> new Transactions(dir));
        assertTrue(e.getMessage().contains("pg_xid_control") && e.getMessage().contains("next_xid_limit"), e.getMessage());
    }
}
