package org.pageio.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
import org.pageio.api.IoMethod;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.measure.cache.CacheState;
import org.pageio.measure.cache.ColdCache;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/**
 * The worker benchmark on the method SPI: a sequential read stream over a {@code fileMiB} file through the method SPI
 * directly (the buffer manager's read streams are not used), {@code depth} handles in flight,
 * each a 128 KiB combined read of 16 iovecs of 8 KiB, {@code io_method=sync} against
 * {@code io_method=worker} (io_min_workers = 2, io_max_workers = {@code maxWorkers}, PostgreSQL's
 * default 8), in the same run.
 *
 * <ul>
 *   <li>{@code cache=warm}: the file is in the OS page cache (read once, then checked with
 *       {@link ColdCache#residency}).</li>
 *   <li>{@code cache=cold}: before every pass, {@code fdatasync} then
 *       {@code posix_fadvise(DONTNEED)}, and proven 0% resident ({@link ColdCache#requireCold}).</li>
 * </ul>
 *
 * Two benchmarks:
 * <ul>
 *   <li>{@code pass}: one operation is one whole pass with {@code method}; score = ms per pass.</li>
 *   <li>{@code paired}: one operation is a sync pass followed by a worker pass over the same file,
 *       each timed; the secondary results {@code syncMs} and {@code workerMs} are the time spent in
 *       each per iteration, so {@code syncMs / workerMs} is the speed-up measured under the same
 *       machine load (use this one on a shared machine).</li>
 * </ul>
 *
 * <pre>./pageio bench WorkerVsSyncBench</pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class WorkerVsSyncBench {

    static final int BLOCK = 8192;
    static final int IOVECS = 16;
    static final int READ = BLOCK * IOVECS; // 128 KiB

    /** The file, its cache state, and the sizes; shared by both benchmarks' states. */
    @State(Scope.Thread)
    public static class Data {
        @Param({"warm", "cold"})
        public String cache;

        /** File size in MiB. */
        @Param("512")
        public int fileMiB;

        /** Handles in flight. */
        @Param("16")
        public int depth;

        /** io_max_workers of the worker method (io_min_workers = min(2, this)); PostgreSQL's default is 8. */
        @Param("8")
        public int maxWorkers;

        Path dir;
        Path file;
        int fd = -1;
        long size;
        Arena arena;
        double residencyBefore;

        @Setup(Level.Trial)
        public void createFile() throws IOException {
            dir = Files.createTempDirectory("pageio-bench-worker");
            file = dir.resolve("stream");
            size = (long) fileMiB << 20;
            writeFile(file, size);
            fd = Posix.open(file, OpenFlags.O_RDWR, 0);
            arena = Arena.ofShared();
        }

        @TearDown(Level.Trial)
        public void deleteFile() throws IOException {
            if (cache.equals("cold")) {
                System.out.println("\n[cold] largest resident fraction before a pass: " + residencyBefore);
            }
            Posix.close(fd, file);
            arena.close();
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }

        IoMethod newMethod(String name) {
            return switch (name) {
                case "sync" -> new SyncIoMethod();
                case "worker" -> new WorkerIoMethod(WorkerSettings.of(Math.min(2, maxWorkers), maxWorkers,
                        WorkerSettings.DEFAULT_IDLE_TIMEOUT_MS, WorkerSettings.DEFAULT_LAUNCH_INTERVAL_MS));
                default -> throw new IllegalArgumentException("method " + name);
            };
        }

        /** Warm: in the page cache, proven. */
        void checkWarm() throws IOException {
            CacheState r = ColdCache.residency(List.of(file));
            if (r.fraction() < 0.99) {
                throw new IllegalStateException("warm: only " + r.residentPages() + " of " + r.totalPages() + " pages of " + file
                        + " are in the page cache");
            }
        }

        /** Cold: out of the page cache, proven. */
        void dropCache() throws IOException {
            CacheState r = ColdCache.requireCold(List.of(file)); // 0 pages resident, or one line naming what stayed
            residencyBefore = Math.max(residencyBefore, r.fraction());
        }
    }

    /** One method's read stream over the file: a context, a session, a window of handles. */
    static final class Stream {
        final Data data;
        final IoMethod io;
        final AioContext ctx;
        final IoSession session;
        final MemorySegment buffers;
        final IoHandle[] handles;
        final long[] generations;
        final IoReturn[] returns;
        final long reads;
        long passes;

        Stream(Data data, String method) {
            this.data = data;
            this.io = data.newMethod(method);
            this.ctx = AioContext.create(io, new AioConfig(4, Math.max(data.depth, 16), IOVECS));
            this.session = ctx.openSession("bench-" + method);
            this.buffers = data.arena.allocate((long) data.depth * READ, 4096);
            this.handles = new IoHandle[data.depth];
            this.generations = new long[data.depth];
            this.returns = new IoReturn[data.depth];
            for (int i = 0; i < data.depth; i++) {
                returns[i] = new IoReturn();
            }
            this.reads = data.size / READ;
        }

        /** One sequential pass over the file with {@code depth} reads in flight; returns bytes read. */
        long pass() {
            long bytes = 0;
            int d = handles.length;
            for (long i = 0; i < reads + d; i++) {
                int slot = (int) (i % d);
                IoHandle h = handles[slot];
                if (h != null) {
                    session.await(h, generations[slot]);
                    long r = returns[slot].result();
                    if (IoResult.status(r) != IoResult.OK || IoResult.result(r) != READ) {
                        throw new IllegalStateException(returns[slot].message());
                    }
                    bytes += READ;
                    handles[slot] = null;
                }
                if (i < reads) {
                    h = session.acquire();
                    generations[slot] = h.generation();
                    long base = buffers.address() + (long) slot * READ;
                    for (int v = 0; v < IOVECS; v++) {
                        h.setIovec(v, base + (long) v * BLOCK, BLOCK);
                    }
                    h.setReturn(returns[slot]);
                    h.startReadv(data.fd, IOVECS, i * READ);
                    handles[slot] = h;
                }
            }
            passes++;
            return bytes;
        }

        void close() {
            session.close();
            ctx.close();
            if (io instanceof WorkerIoMethod w) {
                System.out.println("\n[worker pool after " + passes + " passes] " + w.stats());
                w.close();
            }
        }
    }

    /** State of {@code pass}: one method. */
    @State(Scope.Thread)
    public static class Single {
        @Param({"sync", "worker"})
        public String method;

        Stream stream;

        @Setup(Level.Trial)
        public void open(Data data) throws IOException {
            stream = new Stream(data, method);
            if (data.cache.equals("warm")) {
                stream.pass(); // reads everything into the page cache
                data.checkWarm();
            }
        }

        @Setup(Level.Invocation)
        public void beforePass(Data data) throws IOException {
            if (data.cache.equals("cold")) {
                data.dropCache();
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            stream.close();
        }
    }

    /** State of {@code paired}: both methods over the same file. */
    @State(Scope.Thread)
    public static class Pair {
        Stream sync;
        Stream worker;

        @Setup(Level.Trial)
        public void open(Data data) throws IOException {
            sync = new Stream(data, "sync");
            worker = new Stream(data, "worker");
            if (data.cache.equals("warm")) {
                sync.pass();
                worker.pass();
                data.checkWarm();
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            sync.close();
            worker.close();
        }
    }

    /** Time spent in each method's passes during one iteration of {@code paired}, in ms. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class PairTimes {
        public double syncMs;
        public double workerMs;

        @Setup(Level.Iteration)
        public void reset() {
            syncMs = 0;
            workerMs = 0;
        }
    }

    /** One pass of {@code method}. */
    @Benchmark
    public long pass(Single s) {
        return s.stream.pass();
    }

    /** A sync pass, then a worker pass (cache dropped before each when cold), each timed. */
    @Benchmark
    public long paired(Data data, Pair p, PairTimes t) throws IOException {
        boolean cold = data.cache.equals("cold");
        if (cold) {
            data.dropCache();
        }
        long t0 = System.nanoTime();
        long bytes = p.sync.pass();
        t.syncMs += (System.nanoTime() - t0) / 1e6;
        if (cold) {
            data.dropCache();
        }
        t0 = System.nanoTime();
        bytes += p.worker.pass();
        t.workerMs += (System.nanoTime() - t0) / 1e6;
        return bytes;
    }

    static void writeFile(Path file, long size) throws IOException {
        ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
        for (int i = 0; i < chunk.capacity(); i += 8) {
            chunk.putLong(i, i * 0x9E3779B97F4A7C15L);
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            for (long off = 0; off < size; off += chunk.capacity()) {
                chunk.clear();
                chunk.putLong(0, off); // every MiB differs
                while (chunk.hasRemaining()) {
                    ch.write(chunk, off + chunk.position());
                }
            }
        }
    }
}
