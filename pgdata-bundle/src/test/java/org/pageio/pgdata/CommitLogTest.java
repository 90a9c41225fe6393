package org.pageio.pgdata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link CommitLog}'s bit layout and refusals on a {@code pg_xact} written here, for the statuses a
 * cleanly stopped PostgreSQL does not leave ({@code TRANSACTION_STATUS_SUB_COMMITTED}) and the ids
 * it has no file for; {@link PgHeapScanTest} reads a real one.
 */
class CommitLogTest {

    @TempDir
    Path dir;

    @Test
    void twoBitsPerTransactionLowestIdInTheLowestBits() throws Exception {
        byte[] page = new byte[8192 * 2];
        // xids 4..7 in byte 1: committed, aborted, in progress, sub-committed (lowest id in the lowest bits)
        page[1] = (byte) (0b11_00_10_01);
        // xid 32768 + 5 (page 1, byte 1, bits 2-3): committed
        page[8192 + 1] = (byte) 0b0000_0100;
        Files.write(dir.resolve("0000"), page);
        CommitLog clog = new CommitLog(dir);
        assertEquals(CommitLog.TRANSACTION_STATUS_COMMITTED, clog.status(4));
        assertEquals(CommitLog.TRANSACTION_STATUS_ABORTED, clog.status(5));
        assertEquals(CommitLog.TRANSACTION_STATUS_IN_PROGRESS, clog.status(6));
        assertEquals(CommitLog.TRANSACTION_STATUS_SUB_COMMITTED, clog.status(7));
        assertEquals(CommitLog.TRANSACTION_STATUS_COMMITTED, clog.status(32768 + 5));
        assertEquals(CommitLog.TRANSACTION_STATUS_IN_PROGRESS, clog.status(32768 + 4));
        assertTrue(clog.didCommit(4));
        assertFalse(clog.didCommit(5));
        assertFalse(clog.didCommit(6)); // left in progress: no snapshot sees it
        // ids below FirstNormalTransactionId are not in the log
        assertTrue(clog.didCommit(CommitLog.FROZEN_TRANSACTION_ID));
        assertTrue(clog.didCommit(CommitLog.BOOTSTRAP_TRANSACTION_ID));
        assertFalse(clog.didCommit(CommitLog.INVALID_TRANSACTION_ID));

        PgDataException sub = assertThrows(PgDataException.class, () -> clog.didCommit(7));
        assertTrue(sub.getMessage().startsWith("transaction 7 is TRANSACTION_STATUS_SUB_COMMITTED in \"" + dir + "\"")
                && sub.getMessage().contains("pg_subtrans, which pageio does not read"), sub.getMessage());

        // a page beyond the segment file's end, a segment file that does not exist
        PgDataException shortFile = assertThrows(PgDataException.class, () -> clog.status(2 * 32768 + 1));
        assertEquals("could not access status of transaction 65537: could not read from file \"" + dir.resolve("0000")
                + "\" at offset 16384: read too few bytes (the file holds 2 of its pages)", shortFile.getMessage());
        PgDataException missing = assertThrows(PgDataException.class, () -> clog.status(32 * 32768 + 3));
        assertEquals("could not access status of transaction 1048579: could not open file \"" + dir.resolve("0001")
                + "\": No such file or directory", missing.getMessage());
        // the highest id's segment: FFF (4095) in four digits
        PgDataException last = assertThrows(PgDataException.class, () -> clog.status(-1));
        assertTrue(last.getMessage().startsWith("could not access status of transaction 4294967295: could not open file \""
                + dir.resolve("0FFF") + "\""), last.getMessage());
    }
}
