package org.pageio.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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
import org.pageio.measure.cache.CacheState;
import org.pageio.measure.cache.ColdCache;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;
import org.pageio.heap.HeapPage;

/**
 * The worker benchmark on a real scan: a {@code count(*)}-style sequential scan through the
 * buffer manager, {@code io_method=sync} against {@code io_method=worker}, interleaved in one run.
 *
 * <ul>
 *   <li>The relation: {@code fileMiB} (default 512) of heap pages shaped like the cold-scan drill's
 *       table {@code t} (34 tuples of 232 bytes per page), every page with a valid checksum.</li>
 *   <li>Each method has its own {@link BufferPool} of {@code sharedBuffersMiB} (default 128 MiB,
 *       PostgreSQL's default), checksums on, pg19 look-ahead, {@code io_combine_limit} 16 blocks,
 *       {@code effective_io_concurrency} 16: the defaults. The scan is what
 *       {@code table-bundle}'s sequential scan does for {@code count(*)}: a
 *       {@code SEQUENTIAL | USE_BATCHING} read stream with a bulk-read ring, and for each page
 *       every line pointer checked ({@link HeapPage#tupleOffset}) and counted.</li>
 *   <li>The page verification (header and CRC32C checksum) runs in the read's shared completion
 *       callback: in the issuer with {@code sync}, in the I/O worker with {@code worker}. That
 *       is where the worker method wins in PostgreSQL (995 ms → 529 ms in PostgreSQL 18's announcement).</li>
 *   <li>{@code cache=warm}: the file is in the OS page cache (proven with mincore before each
 *       scan: ≥ 99% resident) but not in shared buffers (a 512 MiB relation through a bulk-read
 *       ring of 2 MiB). {@code cache=cold}: before each scan the
 *       file is flushed and dropped ({@code fdatasync}, {@code POSIX_FADV_DONTNEED}) and mincore
 *       must say 0 pages resident.</li>
 * </ul>
 *
 * One operation of {@code paired} is one scan with each method, the order alternating between
 * operations; the secondary results are the wall time of each ({@code syncMs},
 * {@code workerMs}; their ratio is the speed-up under the same machine load) and CPU time split
 * by thread ({@code syncCpuMs}: the issuer; {@code workerIssuerCpuMs} and {@code workerPoolCpuMs}:
 * the issuer and the I/O workers of the worker scan). The trial's end prints the ratio and the
 * split per scan, and the pool's gauges.
 *
 * <pre>
 * ./pageio bench WorkerScanBench                           # warm and cold, io_max_workers 8
 * ./pageio bench WorkerScanBench -p cache=warm -p maxWorkers=2,8
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 5, time = 4)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class WorkerScanBench {

    static final int TUPLE_LEN = 232;
    static final int NATTS = 5;

    @State(Scope.Thread)
    public static class Data {
        @Param({"warm", "cold"})
        public String cache;

        /** Relation size in MiB, much larger than {@code sharedBuffersMiB}. */
        @Param("512")
        public int fileMiB;

        /** shared_buffers of each pool, much smaller than the relation. */
        @Param("128")
        public int sharedBuffersMiB;

        /** io_max_workers (io_min_workers = min(2, this)); PostgreSQL's default is 8. */
        @Param("8")
        public int maxWorkers;

        Path dir;
        StorageManager smgr;
        SmgrRelation rel;
        long blocks;
        long tuplesPerPage;
        Scan sync;
        Scan worker;
        final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        // totals over the trial (warm-up included), for the summary lines
        long scans;
        final Tally syncTally = new Tally("sync");
        final Tally workerTally = new Tally("worker");
        /** The scans of one paired operation: sync and worker. */
        Scan[] scanList;
        /**
         * The orders of the scans, one per operation in turn: every permutation, so that each scan
         * follows each other one equally often (a cold scan depends on what ran before it: a
         * rotation let {@code worker} always follow {@code sync}).
         */
        int[][] orders;
        int rotation;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "pageio-bench-scan");
            blocks = fileMiB * 128L;
            BufMgrSettings s = new BufMgrSettings.Builder().sharedBuffers(sharedBuffersMiB * 128).build();
            smgr = new StorageManager(dir, s.segmentBlocks(), false);
            rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 1));
            rel.create();
            tuplesPerPage = writeHeap(rel, blocks);
            rel.sync();
            sync = new Scan(this, s, new SyncIoMethod());
            WorkerSettings ws = WorkerSettings.of(Math.min(2, maxWorkers), maxWorkers,
                    WorkerSettings.DEFAULT_IDLE_TIMEOUT_MS, WorkerSettings.DEFAULT_LAUNCH_INTERVAL_MS);
            worker = new Scan(this, s, new WorkerIoMethod(ws));
            scanList = new Scan[] {sync, worker};
            java.util.List<int[]> perms = new java.util.ArrayList<>();
            permute(new int[scanList.length], 0, new boolean[scanList.length], perms);
            orders = perms.toArray(int[][]::new);
            // one scan each before anything is measured: JIT, and the file in the page cache
            sync.scan();
            worker.scan();
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            if (scans > 0) {
                System.out.printf(Locale.ROOT, "%n[%s, io_max_workers %d] %d paired scans of %d MiB: sync %.1f ms, worker %.1f ms,"
                        + " worker speed %.2fx sync; CPU per scan: sync issuer %.1f ms; worker issuer %.1f ms + I/O workers %.1f ms%n",
                        cache, maxWorkers, scans, fileMiB, syncTally.ms / scans, workerTally.ms / scans,
                        syncTally.ms / workerTally.ms, syncTally.issuerCpuMs / scans, workerTally.issuerCpuMs / scans,
                        workerTally.poolCpuMs / scans);
                System.out.println(syncTally.perIo());
                System.out.println(workerTally.perIo());
                System.out.println("[load average] " + loadAverage() + "; file read back into the page cache "
                        + rewarmed + " times");
            }
            System.out.println("[sync stat_io] " + sync.statLine());
            System.out.println("[worker stat_io] " + worker.statLine());
            sync.close();
            worker.close();
            rel.unlink();
            smgr.close();
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }

        /** Times {@link #prepare} had to read the file back into the page cache (warm). */
        long rewarmed;

        /** Puts the relation in the state {@code cache} asks for, and proves it. */
        void prepare() throws IOException {
            List<Path> files = rel.segmentPaths(blocks);
            if (cache.equals("cold")) {
                ColdCache.requireCold(files); // 0 pages resident, or one line naming what stayed
                return;
            }
            CacheState s = ColdCache.residency(files);
            if (s.fraction() < 0.99) {
                // The kernel evicted some (a shared machine; DAMON reclaim): read the files back
                // into the page cache, outside the timed scan, and look again.
                s = ColdCache.warm(files, java.nio.ByteBuffer.allocateDirect(1 << 20));
                rewarmed++;
            }
            if (s.fraction() < 0.99) {
                throw new IllegalStateException("not warm: only " + s.residentPages() + " of " + s.totalPages()
                        + " pages of " + files + " are in the page cache (is the machine short of memory?)");
            }
        }

        /** Reads (I/Os) the pool of {@code scan} counted in stat_io so far. */
        static long reads(Scan scan) {
            long reads = 0;
            for (StatIo.Row r : scan.pool.stats().rows()) {
                reads += r.value(StatIo.Column.READS);
            }
            return reads;
        }

        /** CPU time of the threads named "pageio io worker N", in ns. */
        long poolCpu() {
            long sum = 0;
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith("pageio io worker ")) {
                    long c = mx.getThreadCpuTime(t.threadId());
                    if (c > 0) {
                        sum += c;
                    }
                }
            }
            return sum;
        }
    }

    /** One method's pool and session. */
    static final class Scan {
        final Data data;
        final IoMethod method;
        final BufferManagerCore bufmgr;
        final BufferPool pool;
        final BufferSession session;
        boolean countRows = true;

        Scan(Data data, BufMgrSettings s, IoMethod method) {
            this.data = data;
            this.method = method;
            this.bufmgr = BufferManagerCore.on(data.smgr, s, method);
            this.pool = bufmgr.pool();
            this.session = pool.openSession("client backend");
        }

        /** count(*): every page of the relation through a read stream, every line pointer looked at. */
        long scan() throws IOException {
            BufferAccessStrategy ring = pool.strategy(BufferAccessStrategy.Type.BULKREAD);
            long rows = 0;
            try (ReadStream s = new ReadStream(session, data.rel, ReadStream.blockRange(0, data.blocks),
                    ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, ring)) {
                for (int buf; (buf = s.next()) >= 0; ) {
                    if (countRows) {
                        MemorySegment page = session.page(buf);
                        int n = HeapPage.lineCount(page);
                        for (int line = 1; line <= n; line++) {
                            if (HeapPage.tupleOffset(page, line) >= 0) {
                                rows++;
                            }
                        }
                    } else {
                        rows += data.tuplesPerPage;
                    }
                    session.releaseBuffer(buf);
                }
            }
            if (rows != data.blocks * data.tuplesPerPage) {
                throw new IllegalStateException(method.name() + ": counted " + rows + " rows, expected "
                        + data.blocks * data.tuplesPerPage);
            }
            return rows;
        }

        String statLine() {
            long reads = 0;
            long bytes = 0;
            long hits = 0;
            for (StatIo.Row r : pool.stats().rows()) {
                reads += r.value(StatIo.Column.READS);
                bytes += r.value(StatIo.Column.READ_BYTES);
                hits += r.value(StatIo.Column.HITS);
            }
            return String.format(Locale.ROOT, "reads=%d bytes/read=%.0f hits=%d", reads, reads == 0 ? 0.0 : (double) bytes / reads, hits);
        }

        void close() {
            session.close();
            bufmgr.close();
            if (method instanceof WorkerIoMethod w) {
                System.out.println("[worker pool] " + w.stats());
                w.close();
            }
        }
    }

    /** Time and CPU spent per iteration of {@code paired}, in ms. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Times {
        public double syncMs;
        public double workerMs;
        public double syncCpuMs;
        public double workerIssuerCpuMs;
        public double workerPoolCpuMs;

        @Setup(Level.Iteration)
        public void reset() {
            syncMs = 0;
            workerMs = 0;
            syncCpuMs = 0;
            workerIssuerCpuMs = 0;
            workerPoolCpuMs = 0;
        }
    }

    /** A sync scan and a worker scan (order alternating), each from the cache state asked for. */
    @Benchmark
    public long paired(Data d, Times t) throws IOException {
        Scan[] scans = d.scanList;
        int n = scans.length;
        int[] order = d.orders[d.rotation++ % d.orders.length];
        long rows = 0;
        for (int k = 0; k < n; k++) {
            Scan scan = scans[order[k]];
            Tally tally = scan == d.sync ? d.syncTally : d.workerTally;
            d.prepare();
            tally.begin(d, scan);
            long cpu0 = d.mx.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            rows += scan.scan();
            double ms = (System.nanoTime() - t0) / 1e6;
            double cpu = (d.mx.getCurrentThreadCpuTime() - cpu0) / 1e6;
            double poolMs = tally.end(d, scan, ms, cpu);
            if (scan == d.sync) {
                t.syncMs += ms;
                t.syncCpuMs += cpu;
            } else if (scan == d.worker) {
                t.workerMs += ms;
                t.workerIssuerCpuMs += cpu;
                t.workerPoolCpuMs += poolMs;
            }
        }
        d.scans++;
        return rows;
    }

    /**
     * What one kind of scan cost over the trial: wall and CPU time, I/Os (stat_io reads), context
     * switches {voluntary, involuntary} of the issuer and of the I/O worker threads (all pools'
     * threads: only the scanning pool's are busy), and the pool's hand-off counters.
     */
    static final class Tally {
        final String name;
        double ms;
        double issuerCpuMs;
        double poolCpuMs;
        long ios;
        final long[] issuerSw = new long[2];
        final long[] poolSw = new long[2];
        org.pageio.method.worker.HandOffStats handOffs;
        // at begin
        private long reads0;
        private long pool0;
        private long[] sw0;
        private long[] poolSw0;
        private org.pageio.method.worker.HandOffStats ho0;

        Tally(String name) {
            this.name = name;
        }

        void begin(Data d, Scan scan) {
            reads0 = Data.reads(scan);
            poolSw0 = TaskStats.threads(POOL_COMM);
            pool0 = d.poolCpu();
            ho0 = scan.method instanceof WorkerIoMethod w ? w.handOffStats() : null;
            sw0 = TaskStats.self();
        }

        /** Returns the I/O workers' CPU time of the scan, in ms. */
        double end(Data d, Scan scan, double wallMs, double cpuMs) {
            long[] sw1 = TaskStats.self();
            double poolMs = (d.poolCpu() - pool0) / 1e6;
            long[] poolSw1 = TaskStats.threads(POOL_COMM);
            ios += Data.reads(scan) - reads0;
            for (int i = 0; i < 2; i++) {
                issuerSw[i] += sw1[i] - sw0[i];
                poolSw[i] += poolSw1[i] - poolSw0[i];
            }
            if (ho0 != null) {
                org.pageio.method.worker.HandOffStats ho = ((WorkerIoMethod) scan.method).handOffStats().minus(ho0);
                handOffs = handOffs == null ? ho : add(handOffs, ho);
            }
            ms += wallMs;
            issuerCpuMs += cpuMs;
            poolCpuMs += poolMs;
            return poolMs;
        }

        String perIo() {
            double n = Math.max(1, ios);
            String line = String.format(Locale.ROOT, "[per I/O, %s] %d I/Os: CPU issuer %.2f us + I/O workers %.2f us = %.2f us;"
                    + " switches issuer %.3f vol + %.3f invol, I/O workers %.3f vol + %.3f invol", name, ios,
                    issuerCpuMs * 1e3 / n, poolCpuMs * 1e3 / n, (issuerCpuMs + poolCpuMs) * 1e3 / n,
                    issuerSw[0] / n, issuerSw[1] / n, poolSw[0] / n, poolSw[1] / n);
            return handOffs == null ? line : line + "\n[hand-offs, " + name + "] " + handOffs.perIo();
        }
    }

    /** Adds every permutation of {@code 0..a.length-1} to {@code out} (lexicographic order). */
    static void permute(int[] a, int k, boolean[] used, java.util.List<int[]> out) {
        if (k == a.length) {
            out.add(a.clone());
            return;
        }
        for (int i = 0; i < a.length; i++) {
            if (!used[i]) {
                used[i] = true;
                a[k] = i;
                permute(a, k + 1, used, out);
                used[i] = false;
            }
        }
    }

    /** Kernel name prefix of the I/O worker threads ("pageio io worker N" cut to 15 bytes). */
    static final String POOL_COMM = "pageio io work";

    static org.pageio.method.worker.HandOffStats add(org.pageio.method.worker.HandOffStats a,
            org.pageio.method.worker.HandOffStats b) {
        return b.minus(new org.pageio.method.worker.HandOffStats(a.counting(), -a.workerIos(), -a.takenBack(),
                -a.inline(), -a.batches(), -a.submitWakes(), -a.chainWakes(), -a.workerParks(), -a.wakeupsForWork(),
                -a.futileWakeups(), -a.waits(), -a.waiterSleeps(), -a.waiterUnparks(), -a.waiterKicks(),
                -a.supervisorWakes()));
    }

    static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).strip();
        } catch (IOException e) {
            return "?";
        }
    }

    /**
     * For profiling and for the CPU split: one method alone ({@code only}), with data checksums
     * on or off and the consumer counting rows or not ({@code consume=none}: the page is only
     * pinned and released), in the cache state {@code cache}.
     */
    @State(Scope.Thread)
    public static class Single {
        @Param({"sync", "worker"})
        public String only;

        @Param("on")
        public String checksums;

        @Param("count")
        public String consume;

        Scan scan;
        Data data;
        long scans;
        long issuerCpu;
        long poolCpu;
        long wall;
        long ios;
        long[] issuerSwitches = new long[2];
        long[] poolSwitches = new long[2];
        org.pageio.method.worker.HandOffStats handOffs;

        @Setup(Level.Trial)
        public void open(Data d) throws IOException {
            data = d;
            BufMgrSettings.Builder b = new BufMgrSettings.Builder().sharedBuffers(d.sharedBuffersMiB * 128);
            b.dataChecksums = checksums.equals("on");
            BufMgrSettings s = b.build();
            scan = new Scan(d, s, only.equals("sync") ? new SyncIoMethod()
                    : new WorkerIoMethod(WorkerSettings.of(Math.min(2, d.maxWorkers), d.maxWorkers,
                            WorkerSettings.DEFAULT_IDLE_TIMEOUT_MS, WorkerSettings.DEFAULT_LAUNCH_INTERVAL_MS)));
            scan.countRows = consume.equals("count");
        }

        @TearDown(Level.Trial)
        public void close() {
            if (scans > 0) {
                System.out.printf(Locale.ROOT, "%n[single %s %s, checksums %s, consume %s] %d scans of %d MiB: %.1f ms;"
                        + " CPU per scan: issuer %.1f ms, I/O workers %.1f ms%n", only, data.cache, checksums, consume,
                        scans, data.fileMiB, wall / 1e6 / scans, issuerCpu / 1e6 / scans, poolCpu / 1e6 / scans);
                double n = Math.max(1, ios);
                System.out.printf(Locale.ROOT, "[per I/O] %d I/Os: issuer CPU %.2f us, I/O workers CPU %.2f us;"
                        + " switches issuer %.3f vol + %.3f invol, I/O workers %.3f vol + %.3f invol; load average %s%n",
                        ios, issuerCpu / 1e3 / n, poolCpu / 1e3 / n, issuerSwitches[0] / n, issuerSwitches[1] / n,
                        poolSwitches[0] / n, poolSwitches[1] / n, loadAverage());
                if (handOffs != null) {
                    System.out.println("[worker hand-offs] " + handOffs.perIo());
                }
            }
            scan.close();
        }
    }

    /** One scan with one method ({@link Single}). */
    @Benchmark
    public long single(Data d, Single s) throws IOException {
        d.prepare();
        WorkerIoMethod wm = s.scan.method instanceof WorkerIoMethod m ? m : null;
        org.pageio.method.worker.HandOffStats ho0 = wm == null ? null : wm.handOffStats();
        long reads0 = Data.reads(s.scan);
        long[] poolSw0 = TaskStats.threads(POOL_COMM);
        long pool0 = d.poolCpu();
        long[] sw0 = TaskStats.self();
        long cpu0 = d.mx.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        long rows = s.scan.scan();
        s.wall += System.nanoTime() - t0;
        s.issuerCpu += d.mx.getCurrentThreadCpuTime() - cpu0;
        long[] sw1 = TaskStats.self();
        s.poolCpu += d.poolCpu() - pool0;
        long[] poolSw1 = TaskStats.threads(POOL_COMM);
        s.ios += Data.reads(s.scan) - reads0;
        for (int i = 0; i < 2; i++) {
            s.issuerSwitches[i] += sw1[i] - sw0[i];
            s.poolSwitches[i] += poolSw1[i] - poolSw0[i];
        }
        if (wm != null) {
            org.pageio.method.worker.HandOffStats ho = wm.handOffStats().minus(ho0);
            s.handOffs = s.handOffs == null ? ho : add(s.handOffs, ho);
        }
        s.scans++;
        return rows;
    }

    /** Writes {@code blocks} heap pages of t-shaped tuples with checksums; returns tuples per page. */
    static long writeHeap(SmgrRelation rel, long blocks) throws IOException {
        int chunk = 128;
        int perPage = 0;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(chunk * (long) Page.SIZE, 4096);
            for (long b = 0; b < blocks; b += chunk) {
                int n = (int) Math.min(chunk, blocks - b);
                for (int i = 0; i < n; i++) {
                    MemorySegment page = buf.asSlice(i * (long) Page.SIZE, Page.SIZE);
                    page.fill((byte) 0);
                    HeapPage.init(page);
                    int count = 0;
                    for (int off; (off = HeapPage.addTuple(page, b + i, TUPLE_LEN, NATTS)) >= 0; count++) {
                        HeapPage.setLong(page, off + HeapPage.TUPLE_HEADER_SIZE, (b + i) * 64 + count);
                    }
                    perPage = count;
                    Page.setChecksum(page, b + i);
                }
                rel.write(b, buf, n);
            }
        }
        return perPage;
    }
}
