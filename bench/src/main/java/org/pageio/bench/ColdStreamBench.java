package org.pageio.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.measure.cache.ColdCache;
import org.pageio.method.sync.SyncIoMethod;

/**
 * A cold sequential scan through a read stream (bulk-read ring, as a sequential scan uses) of a
 * relation larger than shared buffers: every iteration evicts the relation from the OS page
 * cache (fdatasync, posix_fadvise DONTNEED, then mincore must say 0% resident) and starts with
 * empty shared buffers. Prints stat_io's reads, read_bytes and bytes per read after each
 * iteration: the figure to watch is bytes per read within 10% of io_combine_limit (131072).
 *
 * <pre>./pageio bench ColdStreamBench</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1)
@Measurement(iterations = 3)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class ColdStreamBench {

    /** Relation size in MiB (at least 256 for a figure worth comparing: 128 MB of shared buffers must not hold it). */
    @Param("256")
    int mib;

    @Param("sync")
    String method;

    Path dir;
    long blocks;
    StorageManager smgr;
    SmgrRelation rel;
    BufferManagerCore bufmgr;
    /** {@link #rel} as the buffer manager's storage manager opens it. */
    SmgrRelation scanRel;
    BufferPool pool;
    BufferSession session;
    BufMgrSettings settings;

    @Setup(Level.Trial)
    public void createRelation() throws IOException {
        dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "pageio-bench-cold");
        blocks = mib * 128L;
        settings = new BufMgrSettings.Builder().build(); // 128MB of shared buffers, as PostgreSQL
        smgr = new StorageManager(dir, settings.segmentBlocks(), false);
        rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 1));
        rel.create();
        try (Arena a = Arena.ofConfined()) {
            int chunk = 128;
            MemorySegment buf = a.allocate(chunk * 8192L, 4096);
            for (long b = 0; b < blocks; b += chunk) {
                for (int i = 0; i < chunk; i++) {
                    MemorySegment page = buf.asSlice(i * 8192L, 8192);
                    Page.init(page, 0);
                    Page.setChecksum(page, b + i);
                }
                rel.write(b, buf, chunk);
            }
        }
        rel.sync();
    }

    @Setup(Level.Iteration)
    public void coldStart() throws IOException {
        Path file = rel.segmentPath(0);
        ColdCache.requireCold(List.of(file)); // 0 pages resident, or one line naming what stayed
        // a buffer manager as a user runs one, empty, over the relation the trial wrote
        bufmgr = BufferManagerCore.open(dir, settings, method());
        pool = bufmgr.pool();
        scanRel = bufmgr.storage().open(rel.locator());
        session = pool.openSession("client");
    }

    private IoMethod method() {
        return switch (method) {
            case "sync" -> new SyncIoMethod();
            default -> throw new IllegalArgumentException("unknown method " + method);
        };
    }

    @Benchmark
    public long scan() throws IOException {
        BufferAccessStrategy ring = pool.strategy(BufferAccessStrategy.Type.BULKREAD);
        long n = 0;
        try (ReadStream s = new ReadStream(session, scanRel, ReadStream.blockRange(0, blocks),
                ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, ring)) {
            for (int buf; (buf = s.next()) >= 0; n++) {
                session.releaseBuffer(buf);
            }
        }
        if (n != blocks) {
            throw new IllegalStateException("scanned " + n + " of " + blocks + " blocks");
        }
        return n;
    }

    @TearDown(Level.Iteration)
    public void report() {
        long reads = 0;
        long bytes = 0;
        for (StatIo.Row r : pool.stats().rows()) {
            reads += r.value(StatIo.Column.READS);
            bytes += r.value(StatIo.Column.READ_BYTES);
        }
        System.out.printf("%n  stat_io (%s): reads=%d read_bytes=%d bytes/read=%.0f (io_combine_limit=%d, ratio %.3f)%n",
                method, reads, bytes, (double) bytes / reads, settings.effectiveIoCombineLimit() * 8192,
                (double) bytes / reads / (settings.effectiveIoCombineLimit() * 8192));
        session.close();
        bufmgr.close();
    }

    @TearDown(Level.Trial)
    public void dropRelation() throws IOException {
        rel.unlink();
        smgr.close();
        Files.deleteIfExists(dir.resolve("base"));
        Files.deleteIfExists(dir);
    }
}
