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
import org.pageio.api.AioConfig;
import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.api.IoTarget;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.posix.CallState;
import org.pageio.posix.Iovec;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/**
 * The cost of the AIO core on the read path: 8 KiB reads of a page-cache-resident file through
 * acquire → stage → (sync) execute → complete → reclaim, against plain FFM preadv of the same
 * blocks into the same buffer, in the same run. The figure to watch: the AIO path reaches at least
 * 0.9 of the raw rate and allocates nothing per I/O ({@code -prof gc}: gc.alloc.rate.norm ≈ 0).
 *
 * <pre>./pageio bench ReadPathBench -prof gc</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class ReadPathBench {

    static final int BLOCK = 8192;

    /** File size in blocks: 1024 blocks = 8 MiB, resident in the page cache after the first read. */
    @Param("1024")
    int blocks;

    Path dir;
    Path file;
    int fd;
    Arena arena;
    MemorySegment buffer;
    MemorySegment iov;
    CallState cs;
    AioContext ctx;
    IoSession session;
    IoReturn ret;
    IoTarget target;
    int next;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("pageio-bench");
        file = dir.resolve("rel");
        byte[] data = new byte[blocks * BLOCK];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 31 + (i >>> 13));
        }
        Files.write(file, data);
        Files.readAllBytes(file); // resident in the page cache
        fd = Posix.open(file, OpenFlags.O_RDONLY, 0);
        arena = Arena.ofShared();
        buffer = arena.allocate(BLOCK, 4096);
        iov = arena.allocate(Iovec.BYTES, 8);
        Iovec.set(iov, 0, buffer);
        cs = CallState.allocate(arena);
        ctx = AioContext.create(new SyncIoMethod(), AioConfig.defaults());
        session = ctx.openSession("bench");
        ret = new IoReturn();
        target = IoTarget.file(file);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        session.close();
        ctx.close();
        Posix.close(fd, file);
        arena.close();
        Files.deleteIfExists(file);
        Files.deleteIfExists(dir);
    }

    private long nextOffset() {
        int b = next;
        next = b + 1 == blocks ? 0 : b + 1;
        return (long) b * BLOCK;
    }

    /** Baseline: one preadv system call through FFM. */
    @Benchmark
    public long rawPreadv() {
        long r = Posix.preadv(cs, fd, iov, 1, nextOffset());
        if (r != BLOCK) {
            throw new IllegalStateException("preadv returned " + r);
        }
        return r;
    }

    /** The same read through the AIO core with io_method=sync. */
    @Benchmark
    public long aioSync() {
        IoHandle h = session.acquire();
        long gen = h.generation();
        h.setIovec(0, buffer.address(), BLOCK).setReturn(ret).setTarget(target, 0);
        h.startReadv(fd, 1, nextOffset());
        session.await(h, gen);
        long r = ret.result();
        if (IoResult.status(r) != IoResult.OK) {
            throw new IllegalStateException(ret.message());
        }
        return r;
    }
}
