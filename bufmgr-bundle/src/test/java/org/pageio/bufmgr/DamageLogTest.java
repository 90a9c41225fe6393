package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.pageio.api.AioException;
import org.pageio.api.internal.PageioLogFormat;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;

/**
 * What a user sees in the log when a read meets a damaged page: one line per damaged page, in
 * pageio's one-line format, whichever thread completes the read and whether the issuer waits on
 * it or a stream does; a page that fails leaves its one line to the error.
 */
class DamageLogTest extends PoolTestBase {

    /** {@code 2026-12-07 01:42:47.123 WARNING org.pageio.bufmgr - invalid page in block 3 of relation …} */
    static final String LINE = "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3} WARNING org\\.pageio\\.bufmgr - invalid page in block %d"
            + " of relation pg_default/%d fork main \\(file [^\\n]+\\): checksum mismatch in block %d: [^\\n]*; %s\\n";

    private final Logger pageio = Logger.getLogger("org.pageio");
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.INFO.intValue()) {
                lines.add(getFormatter().format(r));
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void listen() {
        capture.setFormatter(new PageioLogFormat.OneLine());
        pageio.addHandler(capture);
    }

    @AfterEach
    void stopListening() {
        pageio.removeHandler(capture);
    }

    @Test
    void aZeroedPageIsOneLine() throws Exception {
        zeroedPageIsOneLine(new SyncIoMethod());
    }

    /** A worker completes the read (the completion callback runs there); the issuer waits: still one line. */
    @Test
    void aZeroedPageReadByAWorkerIsOneLine() throws Exception {
        WorkerIoMethod worker = new WorkerIoMethod(WorkerSettings.DEFAULTS);
        closeLast.add(worker::close);
        zeroedPageIsOneLine(worker);
    }

    private void zeroedPageIsOneLine(org.pageio.api.IoMethod m) throws Exception {
        pool(m, small().zeroDamagedPages(true).build());
        SmgrRelation rel = relation(50010, 10);
        TestPages.corrupt(rel, 3, 0xFF);
        try (BufferSession s = pool.openSession("client")) {
            s.releaseBuffer(s.readBuffer(rel, 3, null));
        }
        assertEquals(1, lines.size(), m.name() + ": " + lines);
        String expected = String.format(LINE, 3, 50010, 3, "zeroing out page \\(zero_damaged_pages\\)");
        assertTrue(lines.get(0).matches(expected), m.name() + ": " + lines.get(0));
    }

    @Test
    void aStreamOverTwoDamagedPagesLogsEachOnce() throws Exception {
        pool(new SyncIoMethod(), small().zeroDamagedPages(true).build());
        SmgrRelation rel = relation(50011, 10);
        TestPages.corrupt(rel, 4, 0xFF);
        TestPages.corrupt(rel, 5, 0xFF); // in the same combined read
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 10), 0, null)) {
            for (int i = 0; i < 10; i++) {
                s.releaseBuffer(stream.next());
            }
        }
        assertEquals(2, lines.size(), lines.toString());
        assertTrue(lines.get(0).matches(String.format(LINE, 4, 50011, 4, "zeroing out page \\(zero_damaged_pages\\)")), lines.get(0));
        assertTrue(lines.get(1).matches(String.format(LINE, 5, 50011, 5, "zeroing out page \\(zero_damaged_pages\\)")), lines.get(1));
    }

    @Test
    void anIgnoredChecksumIsOneLine() throws Exception {
        pool(new SyncIoMethod(), small().ignoreChecksumFailure(true).build());
        SmgrRelation rel = relation(50012, 10);
        TestPages.corrupt(rel, 6, 0xFF);
        try (BufferSession s = pool.openSession("client")) {
            s.releaseBuffer(s.readBuffer(rel, 6, null));
        }
        assertEquals(1, lines.size(), lines.toString());
        assertTrue(lines.get(0).matches(String.format(LINE, 6, 50012, 6, "using it anyway \\(ignore_checksum_failure\\)")), lines.get(0));
    }

    /** A page that fails is the error's line: the log adds none at WARNING. */
    @Test
    void aFailedPageIsTheErrorsLineOnly() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(50013, 10);
        TestPages.corrupt(rel, 2, 0xFF);
        try (BufferSession s = pool.openSession("client")) {
            AioException e = assertThrows(AioException.class, () -> s.readBuffer(rel, 2, null));
            assertTrue(e.getMessage().startsWith("invalid page in block 2 of relation pg_default/50013"), e.getMessage());
            assertEquals(1, e.getMessage().lines().count(), e.getMessage());
        }
        assertEquals(List.of(), lines);
    }
}
