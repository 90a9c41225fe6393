package org.pageio.examples.embedded;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.uring.UringIoMethod;
import org.pageio.heap.HeapPage;
import org.pageio.table.LoadProgress;
import org.pageio.table.TableInfo;
import org.pageio.table.TableShape;
import org.pageio.table.engine.TableEngine;

/** pageio in a plain Java program, no OSGi container: write a table, scan it through a read stream, print stat_io. */
public final class EmbeddedExample {

    /** What the scan read and counted, and the pool's stat_io after it. */
    public record Result(String ioMethod, long blocksWritten, long blocksRead, long rows, long idSum, StatIo statIo) { }

    /** {@code java … EmbeddedExample [NEW_DATA_DIR] [sync|io_uring]} (default: a new temporary directory, io_uring) */
    public static void main(String[] args) throws IOException {
        Path dir = args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("pageio-embedded");
        run(dir, args.length > 1 ? args[1] : "io_uring", 100_000, System.out);
    }

    public static Result run(Path dataDir, String ioMethod, long rows, PrintStream out) throws IOException {
        // 1. The I/O method: the class the container would register as the io_method service, made by hand.
        IoMethod method = ioMethod.equals("io_uring") ? new UringIoMethod(UringIoMethod.DEFAULT_FORCE_ASYNC) : new SyncIoMethod();
        if (!method.availability().available()) { // e.g. io_uring refused by the kernel or a seccomp profile: it says why
            out.println(ioMethod + " is not available (" + method.availability().cause() + "); using sync");
            method = new SyncIoMethod();
        }
        // 2. A buffer manager over the directory: storage manager, AIO context on the method, shared buffers.
        BufMgrSettings settings = new BufMgrSettings.Builder().sharedBuffers(1024).build(); // 1024 × 8 kB = 8MB
        try (BufferManagerCore bufmgr = BufferManagerCore.open(dataDir, settings, method)) {

            // 3. A table: the cold-scan drill's table t (id bigint, pad text), 33 rows a page. Its
            //    pages are built off-heap and written with asynchronous writes on the io_method.
            TableEngine tables = new TableEngine(bufmgr.pool());
            TableInfo t = tables.load("t", TableShape.T, rows, 1, LoadProgress.NONE).table();
            SmgrRelation heap = tables.heap(t); // the relation file(s) under dataDir/base

            // 4. Read every block through a read stream, as PostgreSQL's sequential scan does: it looks
            //    ahead, combines neighbouring blocks into one read (io_combine_limit) and keeps up to
            //    effective_io_concurrency reads in flight; next() returns each block pinned, in order.
            long blocks = 0, count = 0, idSum = 0;
            int idAt = TableShape.T.column("id").offset(); // the column's offset in a tuple
            // a small ring of buffers, as PostgreSQL gives a big sequential scan, so it does not flush shared buffers
            BufferAccessStrategy ring = bufmgr.pool().strategy(BufferAccessStrategy.Type.BULKREAD);
            try (BufferSession session = bufmgr.pool().openSession("client backend");
                    ReadStream stream = new ReadStream(session, heap, ReadStream.blockRange(0, t.blocks()),
                            ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, ring)) {
                for (int buf; (buf = stream.next()) >= 0; blocks++) {
                    MemorySegment page = session.page(buf); // the 8 kB page in shared buffers, checksum verified
                    for (int line = 1; line <= HeapPage.lineCount(page); line++) { // each tuple on the page
                        idSum += HeapPage.getLong(page, HeapPage.tupleOffset(page, line) + idAt);
                        count++;
                    }
                    session.releaseBuffer(buf); // unpin: the stream's look-ahead needs the buffer back
                }
            }
            out.printf("read %,d blocks of t on io_method=%s: %,d rows, sum(id) = %,d%n", blocks, method.name(), count, idSum);

            // 5. stat_io, as pg_stat_io shows it: one row per session kind × object × context × io_method.
            //    The load's new pages count as extends (bulkwrite), the scan's reads as reads (bulkread).
            out.printf("%-15s %-9s %-9s %-9s %6s %11s %7s %12s %6s%n", "backend_type", "object", "context",
                    "io_method", "reads", "read_bytes", "extends", "extend_bytes", "fsyncs");
            for (StatIo.Row r : bufmgr.stats().rows()) {
                out.printf("%-15s %-9s %-9s %-9s %6d %11d %7d %12d %6d%n", r.kind(), r.object().label, r.context().label,
                        r.ioMethod(), r.value(StatIo.Column.READS), r.value(StatIo.Column.READ_BYTES),
                        r.value(StatIo.Column.EXTENDS), r.value(StatIo.Column.EXTEND_BYTES), r.value(StatIo.Column.FSYNCS));
            }
            return new Result(method.name(), t.blocks(), blocks, count, idSum, bufmgr.stats());
        }
    }
}
