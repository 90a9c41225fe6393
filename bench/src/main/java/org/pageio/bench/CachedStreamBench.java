package org.pageio.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.sync.SyncIoMethod;

/**
 * The all-cached read path: one block through a read stream ({@code next()}) and back
 * ({@code releaseBuffer}) when every block is in shared buffers. The figure to watch: at most
 * 100 ns per block, nothing allocated per block ({@code -prof gc}: gc.alloc.rate.norm ≈ 0).
 *
 * <pre>./pageio bench CachedStreamBench -prof gc</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class CachedStreamBench {

    @Param("1024")
    int blocks;

    @Param({"pg19", "pg18"})
    String lookahead;

    Path dir;
    BufferManagerCore bufmgr;
    BufferPool pool;
    BufferSession session;
    ReadStream stream;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("pageio-bench-cached");
        BufMgrSettings s = new BufMgrSettings.Builder().sharedBuffers(4 * blocks)
                .readStreamLookahead(BufMgrSettings.Lookahead.valueOf(lookahead.toUpperCase())).build();
        bufmgr = BufferManagerCore.open(dir, s, new SyncIoMethod());
        pool = bufmgr.pool();
        SmgrRelation rel = bufmgr.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 1));
        rel.create();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment page = a.allocate(8192, 4096);
            for (int b = 0; b < blocks; b++) {
                Page.init(page, 0);
                Page.setChecksum(page, b);
                rel.write(b, page, 1);
            }
        }
        session = pool.openSession("client");
        long[] next = {0};
        // An endless scan over the relation: every block is read once, then always hit.
        stream = new ReadStream(session, rel, st -> {
            long b = next[0];
            next[0] = b + 1 == blocks ? 0 : b + 1;
            return b;
        }, ReadStream.SEQUENTIAL, null);
        for (int i = 0; i < blocks * 2; i++) {
            session.releaseBuffer(stream.next());
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        stream.close();
        session.close();
        bufmgr.close();
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Benchmark
    public int nextAndRelease() throws IOException {
        int buf = stream.next();
        session.releaseBuffer(buf);
        return buf;
    }
}
