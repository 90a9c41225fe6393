package org.pageio.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.pageio.api.AioContext;
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
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.bufmgr.stream.StreamStats;
import org.pageio.measure.cache.ColdCache;
import org.pageio.measure.fio.Fio;
import org.pageio.measure.fio.FioJob;
import org.pageio.measure.fio.FioResult;
import org.pageio.method.direct.DirectIoMethod;
import org.pageio.method.direct.DirectSettings;
import org.pageio.uring.IoUringCounters;

/**
 * {@code io_method=direct} through the whole buffer manager against fio with O_DIRECT on the same
 * file, in one run:
 * <ul>
 * <li><b>seq</b>: a cold sequential scan of a relation of at least 1 GiB — {@link StorageManager}
 * opening with O_DIRECT, {@link BufferPool} emptied before every pass, a {@link ReadStream} with
 * {@code SEQUENTIAL | USE_BATCHING} and the bulk-read ring a sequential scan uses,
 * {@code io_combine_limit} 16 (128 KiB), {@code effective_io_concurrency} 16 — against
 * {@code fio --direct=1 --ioengine=io_uring --rw=read --bs=128k --iodepth=16} (bandwidth);</li>
 * <li><b>rand</b>: a read stream over a random permutation of the relation's blocks in which no
 * block is followed by the next one (combining impossible), {@code effective_io_concurrency} 64 and
 * the default {@code io_combine_limit} (16, which sizes the pin budget as in PostgreSQL), for
 * as many seconds as fio gets, against {@code fio --direct=1 --ioengine=io_uring --rw=randread
 * --bs=8k --iodepth=64} (IOPS).</li>
 * </ul>
 * Every pass, ours and fio's ({@link Fio}), starts cold ({@link ColdCache}): {@code fdatasync},
 * {@code posix_fadvise(DONTNEED)} and {@code mincore} must prove 0 pages resident (irrelevant for O_DIRECT reads, but it keeps the
 * comparison honest), and ours starts with empty shared buffers. Each round first reads the file
 * once through the page cache (so that a VM host's cache behind the virtual disk is in the same
 * state for every pass) and alternates whether fio runs first or last. {@code shared_buffers} is
 * 512 MB so that the session's pin share (shared_buffers / 64 sessions) lets the stream keep 16
 * reads of 16 blocks in flight; the stream's own statistics (average reads in flight, average read
 * size) are printed next to each pass.
 *
 * <p>How many rounds: on this VM one pass's ratio to fio's pass of the same round spreads from
 * 0.7 to 1.1, so the median of 6 rounds moves by ±0.03 from one run to the next. Each ratio line
 * therefore also prints a 95% confidence interval of the median (a bootstrap over the rounds). A
 * random round lasts about 5 s ({@code --size-mib 1024}: 131,072 reads per pass, each side), so
 * the random figure in docs/performance.md is measured with {@code --workloads rand --rounds 40} (about 4 minutes).
 *
 * <pre>
 * bench/direct-vs-fio.sh [--dir DIR] [--size-mib 1024] [--seconds 10] [--rounds 3] [--engines io_uring,threads]
 *                        [--workloads seq|rand|both] [--raw] [--raw-groups 2,3] [--warmups 2] [--sample-inflight] [--keep]
 *                        [--checksums on|off] [--io-max-concurrency 128,64] [--registered-buffers on|off|both]
 *                        [--huge-pages try|on|off|both]
 * </pre>
 * {@code --checksums off} reads without page verification ({@code data_checksums} off), to
 * measure what CRC32C of freshly DMA'd pages costs the stream. {@code --io-max-concurrency}
 * ({@code io_max_concurrency}, I/O handles per session; default 128, twice the random depth): a
 * random stream holds a handle for each read it has not consumed (PostgreSQL's accounting: a read
 * counts against its 64 until consumed); a second value runs the same stream again in each round
 * with that many handles, in a row named {@code direct io_uring hN}. {@code --registered-buffers} (default on): whether the pool offers its pages for
 * io_uring's registered buffers ({@code READ_FIXED}: no page mapping per read); {@code both} runs
 * the same stream without them in every round too ({@code direct io_uring unreg}, alternating
 * which of the two goes first) and prints their ratio, round by round. {@code --huge-pages}
 * ({@code huge_pages}, default try): the pool's pages in 2 MB pages or not; {@code both} runs the
 * stream with {@code off} in every round too ({@code direct io_uring 4k}) and prints the ratio.
 * Each pass prints the process's CPU time per I/O (fio's from its usr_cpu/sys_cpu): on a busy
 * machine the side that spends more CPU per I/O loses more. {@code --raw} adds a row per engine
 * with the same reads through the AIO core and the method alone (no buffer manager);
 * {@code --raw-groups 2,3} adds raw rows that submit exactly that many reads per
 * {@code io_uring_enter} (io_uring plugs the block layer, so adjacent reads merge, only above 2).
 * Every pass also prints what the block device saw ({@link DeviceSampler}: reads and their average
 * size after merging, average queue depth; with {@code --sample-inflight} the reads in flight
 * sampled every millisecond) and ours the stream's
 * look-ahead (average and largest distance, and after how many reads and buffers it first had
 * {@code effective_io_concurrency} reads in flight). The relation (default under
 * bench/target/direct-vs-fio) is deleted at the end unless --keep.
 */
public final class DirectVsFioBench {

    static final int SEQ_DEPTH = 16;
    static final int SEQ_COMBINE = 16;
    static final int RAND_DEPTH = 64;

    /** {@code cpuMicrosPerIo}: the process's CPU time (user + system) during the pass, per I/O. */
    record Result(String who, String workload, double bytesPerSecond, double iops, long ios, double cpuMicrosPerIo,
            String note) {
        String line() {
            return String.format(Locale.ROOT, "%-20s %-22s %9.1f MiB/s %9.0f IOPS %8d I/Os %6.1f us CPU/I/O  %s", who,
                    workload, bytesPerSecond / (1 << 20), iops, ios, cpuMicrosPerIo, note);
        }
    }

    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();

    public static void main(String[] args) throws Exception {
        Path dir = Path.of("bench/target/direct-vs-fio");
        long sizeMib = 1024;
        int seconds = 10;
        int rounds = 3;
        boolean keep = false;
        boolean raw = false;
        boolean checksums = true;
        int warmups = 2;
        List<Integer> rawGroups = List.of();
        String workloads = "both";
        List<String> engines = List.of("io_uring");
        // io_max_concurrency: I/O handles per session. Twice the random depth, so that a random
        // stream can start replacements for completed reads before it has processed them (its
        // reads at the device stay at effective_io_concurrency = 64, fio's iodepth); more values
        // run the same stream again in each round with that many handles ("direct io_uring h64":
        // no handle to spare, PostgreSQL's accounting).
        List<Integer> ioMaxConcurrency = List.of(2 * RAND_DEPTH);
        // registered buffers (io_uring's fixed buffers, the pool's pages registered once per ring):
        // on, off, or both ("direct io_uring unreg": the same stream without, in the same rounds)
        String registered = "on";
        String hugePages = "try";
        BenchArgs a = new BenchArgs("direct-vs-fio", "--dir DIR --size-mib N --seconds N --rounds N"
                + " --engines io_uring,threads --workloads seq|rand|both --raw --raw-groups 2,3 --warmups N"
                + " --sample-inflight --keep --checksums on|off --io-max-concurrency 128,64"
                + " --registered-buffers on|off|both --huge-pages try|on|off|both", args);
        while (a.next()) {
            switch (a.option()) {
                case "--dir" -> dir = Path.of(a.value());
                case "--size-mib" -> sizeMib = a.longValue();
                case "--seconds" -> seconds = a.intValue();
                case "--rounds" -> rounds = a.intValue();
                case "--engines" -> engines = List.of(a.value().split(","));
                case "--workloads" -> workloads = a.value();
                case "--keep" -> keep = true;
                case "--checksums" -> {
                    String v = a.value();
                    checksums = switch (v) {
                        case "on" -> true;
                        case "off" -> false;
                        default -> throw a.fail("--checksums must be on or off, not " + v);
                    };
                }
                case "--raw" -> raw = true;
                case "--warmups" -> warmups = a.intValue();
                case "--sample-inflight" -> DeviceSampler.sampleInflight = true;
                case "--raw-groups" -> rawGroups = a.listValue(Integer::parseInt);
                case "--io-max-concurrency" -> ioMaxConcurrency = a.listValue(Integer::parseInt);
                case "--registered-buffers" -> {
                    registered = a.value();
                    if (!List.of("on", "off", "both").contains(registered)) {
                        throw a.fail("--registered-buffers must be on, off or both, not " + registered);
                    }
                }
                case "--huge-pages" -> {
                    hugePages = a.value();
                    if (!List.of("try", "on", "off", "both").contains(hugePages)) {
                        throw a.fail("--huge-pages must be try, on, off or both, not " + hugePages);
                    }
                }
                default -> throw a.unknown();
            }
        }
        Fio fio = a.fio();
        if (sizeMib < 1024) {
            System.out.println("note: figures comparable with docs/performance.md need --size-mib 1024 or more; " + sizeMib
                    + " MiB is a smoke run");
        }
        long blocks = sizeMib * 128;
        BufMgrSettings settings = new BufMgrSettings.Builder().sharedBuffers(65536).ioCombineLimit(SEQ_COMBINE)
                .effectiveIoConcurrency(SEQ_DEPTH).segmentBlocks(Math.max(blocks, StorageManager.DEFAULT_SEGMENT_BLOCKS))
                .build();
        BufMgrSettings.Builder db = settings.toBuilder();
        db.directIo = true;
        db.dataChecksums = checksums;
        db.registeredBuffers = !registered.equals("off");
        db.hugePages = BufMgrSettings.HugePages.parse(hugePages.equals("both") ? "try" : hugePages);
        List<BufMgrSettings> directs = new ArrayList<>();
        for (int n : ioMaxConcurrency) {
            db.ioMaxConcurrency = n;
            directs.add(db.build());
        }
        BufMgrSettings direct = directs.get(0);
        // the same stream with one setting changed, in every round, alternating which goes first
        List<Paired> paired = new ArrayList<>();
        if (registered.equals("both")) {
            BufMgrSettings.Builder ub = direct.toBuilder();
            ub.registeredBuffers = false;
            paired.add(new Paired("unreg", "registered buffers", ub.build()));
        }
        if (hugePages.equals("both")) {
            BufMgrSettings.Builder hb = direct.toBuilder();
            hb.hugePages = BufMgrSettings.HugePages.OFF;
            paired.add(new Paired("4k", "huge pages", hb.build()));
        }
        Files.createDirectories(dir);
        List<Result> all = new ArrayList<>();
        try (StorageManager writer = new StorageManager(dir, settings.segmentBlocks(), false)) {
            SmgrRelation rel = writer.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 1));
            Path file = rel.segmentPath(0);
            try {
                prepare(rel, blocks);
                rel.close();
                System.out.printf(Locale.ROOT, "relation file %s, %d MiB (%d blocks), one segment, on %s; %s; load average %s%s%n",
                        file, sizeMib, blocks, DeviceSampler.name(file), fio.version(), loadAverage(),
                        checksums ? "" : "; data checksums OFF (pages not verified)");
                // Warm-up, not recorded: the first passes in a JVM run interpreted and pay for JIT
                // compilation, which on a 1 GiB pass at GB/s is most of the pass.
                // Two by default: a 1 GiB sequential pass lasts about half a second, and C2 was still
                // compiling (its threads' CPU counted in the process's) through the first recorded
                // round after one warm-up pass (72-85 µs CPU per read there, 20-30 in later rounds).
                for (int w = 0; w < warmups; w++) {
                    for (String engine : engines) {
                        for (boolean random : new boolean[] {false, true}) {
                            if (!workloads.equals(random ? "seq" : "rand")) {
                                System.out.println("warm-up (not recorded): "
                                        + ours(dir, direct, file, blocks, random, Math.min(seconds, 3), engine).line());
                                if (raw) {
                                    System.out.println("warm-up (not recorded): "
                                            + raw(file, blocks, random, Math.min(seconds, 3), engine, 1).line());
                                }
                            }
                        }
                    }
                }
                for (int round = 1; round <= rounds; round++) {
                    System.out.println("--- round " + round + " (load average " + loadAverage() + ")");
                    UringVsFioBench.prime(file, blocks * StorageManager.BLCKSZ);
                    for (boolean random : new boolean[] {false, true}) {
                        if (workloads.equals(random ? "seq" : "rand")) {
                            continue;
                        }
                        boolean fioFirst = round % 2 == 1;
                        if (fioFirst) {
                            all.add(print(fio(fio, file, blocks, random, seconds)));
                        }
                        for (String engine : engines) {
                            // the stream (null) first in odd rounds, after its paired variants in even
                            // ones: a pass may leave the host's cache warmer for the next
                            List<Paired> passes = new ArrayList<>(paired);
                            passes.add(round % 2 == 1 ? 0 : passes.size(), null);
                            for (Paired v : passes) {
                                Result r = ours(dir, v == null ? direct : v.settings(), file, blocks, random, seconds, engine);
                                all.add(print(v == null ? r : renamed(r, v.who(engine))));
                            }
                            for (int k = 1; k < directs.size(); k++) { // the same stream with fewer I/O handles
                                all.add(print(renamed(ours(dir, directs.get(k), file, blocks, random, seconds, engine),
                                        iomcName(engine, ioMaxConcurrency.get(k)))));
                            }
                            if (raw) {
                                all.add(print(raw(file, blocks, random, seconds, engine, 1)));
                            }
                            for (int g : rawGroups) {
                                all.add(print(raw(file, blocks, random, seconds, engine, g)));
                            }
                        }
                        if (!fioFirst) {
                            all.add(print(fio(fio, file, blocks, random, seconds)));
                        }
                    }
                }
            } finally {
                if (!keep) {
                    rel.unlink();
                }
            }
        }
        System.out.println("--- ratios, pageio direct / fio: best round / median round, then the median (min-max) of the"
                + " per-round ratios, each pass against fio's pass of the same round (" + rounds + " rounds)");
        for (boolean random : new boolean[] {false, true}) {
            if (workloads.equals(random ? "seq" : "rand")) {
                continue;
            }
            String w = workload(random);
            double fioBest = UringVsFioBench.stat(asUring(all), "fio", w, random, true);
            double fioMedian = UringVsFioBench.stat(asUring(all), "fio", w, random, false);
            for (String who : whos(engines, raw, rawGroups, ioMaxConcurrency, paired)) {
                double[] r = pairedRatios(all, who, "fio", w, random);
                System.out.printf(Locale.ROOT, "%-22s %-16s %-9s %.3f / %.3f x fio; per round %.3f (%.3f-%.3f; 95%% CI of the"
                        + " median %.3f-%.3f)%n", w,
                        who, random ? "IOPS" : "bandwidth", UringVsFioBench.stat(asUring(all), who, w, random, true) / fioBest,
                        UringVsFioBench.stat(asUring(all), who, w, random, false) / fioMedian, r[0], r[1], r[2], r[3], r[4]);
            }
            for (Paired v : paired) {
                for (String e : engines) {
                    double[] q = pairedRatios(all, "direct " + e, v.who(e), w, random);
                    System.out.printf(Locale.ROOT, "%-22s %s: direct %s / %s, same rounds: %.3f (%.3f-%.3f; 95%% CI %.3f-%.3f)%n",
                            w, v.what(), e, v.who(e), q[0], q[1], q[2], q[3], q[4]);
                }
            }
        }
    }

    private static Result renamed(Result r, String who) {
        return new Result(who, r.workload(), r.bytesPerSecond(), r.iops(), r.ios(), r.cpuMicrosPerIo(), r.note());
    }

    /** The stream with one setting changed ({@code what}), run in the same rounds as a row named {@link #who}. */
    private record Paired(String suffix, String what, BufMgrSettings settings) {
        String who(String engine) {
            return "direct " + engine + " " + suffix;
        }
    }

    /**
     * {median, min, max, 95% confidence interval of the median (low, high)} of the per-round ratios
     * {@code who ÷ base} (fio, or another row): the k-th
     * pass of {@code who} against base's k-th pass of the same workload (the same round, the same
     * freshly primed file).
     * On a VM whose virtual disk sits on the host's cache, the rounds drift together (fio's own
     * random IOPS doubled from one round to the next); pairing cancels that drift, where best ÷
     * best and median ÷ median compare passes of different rounds.
     */
    static double[] pairedRatios(List<Result> all, String who, String base, String w, boolean random) {
        List<Double> ours = new ArrayList<>();
        List<Double> bases = new ArrayList<>();
        for (Result r : all) {
            if (r.workload().equals(w) && (r.who().equals(who) || r.who().equals(base))) {
                (r.who().equals(base) ? bases : ours).add(random ? r.iops() : r.bytesPerSecond());
            }
        }
        int n = Math.min(ours.size(), bases.size());
        if (n == 0) {
            return new double[] {Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN};
        }
        double[] q = new double[n];
        for (int i = 0; i < n; i++) {
            q[i] = ours.get(i) / bases.get(i);
        }
        java.util.Arrays.sort(q);
        // how far the median of n rounds can be trusted: the 2.5th and 97.5th percentiles of the
        // medians of 2,000 resamples of the rounds (a bootstrap; fixed seed, so a log reproduces)
        java.util.Random rnd = new java.util.Random(42);
        double[] medians = new double[2000];
        double[] sample = new double[n];
        for (int b = 0; b < medians.length; b++) {
            for (int i = 0; i < n; i++) {
                sample[i] = q[rnd.nextInt(n)];
            }
            java.util.Arrays.sort(sample);
            medians[b] = median(sample);
        }
        java.util.Arrays.sort(medians);
        return new double[] {median(q), q[0], q[n - 1], medians[50], medians[1949]};
    }

    /** The median of sorted values. */
    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static List<String> whos(List<String> engines, boolean raw, List<Integer> rawGroups, List<Integer> iomc,
            List<Paired> paired) {
        List<String> whos = new ArrayList<>();
        for (String e : engines) {
            whos.add("direct " + e);
            for (Paired v : paired) {
                whos.add(v.who(e));
            }
            for (int k = 1; k < iomc.size(); k++) {
                whos.add(iomcName(e, iomc.get(k)));
            }
            if (raw) {
                whos.add("raw " + e);
            }
            for (int g : rawGroups) {
                whos.add(rawName(e, g));
            }
        }
        return whos;
    }

    private static String iomcName(String engine, int ioMaxConcurrency) {
        return "direct " + engine + " h" + ioMaxConcurrency;
    }

    private static String rawName(String engine, int group) {
        return group == 1 ? "raw " + engine : "raw g" + group + " " + engine;
    }

    private static List<UringVsFioBench.Result> asUring(List<Result> rs) {
        List<UringVsFioBench.Result> out = new ArrayList<>();
        for (Result r : rs) {
            out.add(new UringVsFioBench.Result(r.who(), r.workload(), r.bytesPerSecond(), r.iops(), r.ios()));
        }
        return out;
    }

    /** The first three fields of /proc/loadavg, for the record next to each round. */
    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    static String workload(boolean random) {
        return random ? "randread 8k depth 64" : "read 128k depth 16";
    }

    static Result print(Result r) {
        System.out.println(r.line());
        return r;
    }

    /** Writes the relation once (valid pages with checksums) unless it is already there with that size. */
    static void prepare(SmgrRelation rel, long blocks) throws IOException {
        if (rel.exists() && rel.nblocks() == blocks) {
            return;
        }
        rel.unlink();
        rel.create();
        try (Arena a = Arena.ofConfined()) {
            int chunk = 128;
            MemorySegment buf = a.allocate(chunk * (long) StorageManager.BLCKSZ, 4096);
            Random rnd = new Random(42);
            byte[] filler = new byte[4096];
            for (long b = 0; b < blocks; b += chunk) {
                int n = (int) Math.min(chunk, blocks - b);
                for (int i = 0; i < n; i++) {
                    MemorySegment page = buf.asSlice(i * (long) StorageManager.BLCKSZ, StorageManager.BLCKSZ);
                    Page.init(page, 0);
                    rnd.nextBytes(filler); // incompressible payload in the page's free space
                    MemorySegment.copy(MemorySegment.ofArray(filler), 0, page, 2048, filler.length);
                    Page.setChecksum(page, b + i);
                }
                rel.write(b, buf, n);
            }
        }
        rel.sync();
    }

    /** Drops the file's pages and proves them gone: 0 resident ({@link ColdCache#requireCold}). */
    static void cold(Path file) throws IOException {
        ColdCache.requireCold(List.of(file));
    }

    /** Swaps entries until no block is followed by the next one, so that a read stream cannot combine. */
    static int[] nonAdjacent(int[] order) {
        for (boolean changed = true; changed; ) {
            changed = false;
            for (int i = 0; i + 1 < order.length; i++) {
                if (order[i + 1] == order[i] + 1) {
                    int j = (i + 2) % order.length;
                    int t = order[i + 1];
                    order[i + 1] = order[j];
                    order[j] = t;
                    changed = true;
                }
            }
        }
        return order;
    }

    // ------------------------------------------------------------------ fio

    static Result fio(Fio fio, Path file, long blocks, boolean random, int seconds) throws Exception {
        cold(file);
        FioJob job = (random ? FioJob.randomRead(List.of(file), 8192, RAND_DEPTH, true)
                : FioJob.sequentialRead(List.of(file), 131072, SEQ_DEPTH, true))
                .withName(random ? "randread" : "seqread").withSize(blocks * StorageManager.BLCKSZ).withRuntime(random ? seconds : 0);
        FioResult r;
        DeviceSampler dev = DeviceSampler.of(file);
        try {
            r = fio.run(job);
        } finally {
            if (dev != null) {
                dev.close();
            }
        }
        long ios = r.ioBytes() / (random ? 8192 : 131072);
        // fio's CPU time: its usr_cpu and sys_cpu, percentages of the job's run time
        return new Result("fio", workload(random), r.bwBytes(), r.iops(), ios, r.cpuNanos() / 1e3 / ios,
                dev == null ? "" : "(" + dev.note() + ")");
    }

    // ------------------------------------------------------------------ ours

    static Result ours(Path dir, BufMgrSettings settings, Path file, long blocks, boolean random, int seconds, String engine)
            throws Exception {
        DirectIoMethod method = direct(engine);
        int[] order = random ? nonAdjacent(UringVsFioBench.permutation((int) blocks)) : null;
        cold(file);
        long n = 0;
        long t0;
        long t1;
        long cpu0;
        long cpu1;
        StreamStats stats;
        DeviceSampler dev;
        String huge;
        BufMgrSettings.Builder direct = settings.toBuilder();
        direct.directIo = true; // relation files with O_DIRECT, as for io_method=direct
        try (BufferManagerCore bufmgr = BufferManagerCore.open(dir, direct.build(), method)) {
            StorageManager smgr = bufmgr.storage();
            BufferPool pool = bufmgr.pool(); // empty shared buffers
            huge = pool.hugePages();
            SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 1));
            try (BufferSession session = pool.openSession("client")) {
                ReadStream.BlockCallback cb;
                ReadStream.Options opts;
                int flags;
                BufferAccessStrategy ring;
                if (random) {
                    int[] o = order;
                    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
                    cb = new ReadStream.BlockCallback() {
                        int i;

                        @Override
                        public long nextBlock(ReadStream s) {
                            // the clock only every 64 blocks: cheap, and at most 63 blocks late
                            if (i == o.length || ((i & 63) == 0 && System.nanoTime() > deadline)) {
                                return ReadStream.END;
                            }
                            return o[i++];
                        }
                    };
                    // io_combine_limit stays at 16, as a bitmap heap scan runs: the order has no two
                    // adjacent blocks in a row, so nothing combines, and the stream's pin budget is
                    // PostgreSQL's (max_ios + 1) × io_combine_limit
                    opts = new ReadStream.Options(RAND_DEPTH, ReadStream.Options.INHERIT, null);
                    flags = ReadStream.USE_BATCHING; // a bitmap heap scan's flags
                    ring = null; // random access (a bitmap heap scan) uses no ring
                } else {
                    cb = ReadStream.blockRange(0, blocks);
                    opts = ReadStream.Options.DEFAULT;
                    flags = ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING;
                    ring = pool.strategy(BufferAccessStrategy.Type.BULKREAD);
                }
                dev = DeviceSampler.of(file);
                cpu0 = OS.getProcessCpuTime();
                t0 = System.nanoTime();
                try (ReadStream s = new ReadStream(session, rel, cb, flags, ring, opts)) {
                    for (int buf; (buf = s.next()) >= 0; n++) {
                        session.releaseBuffer(buf);
                    }
                    stats = s.stats();
                }
                t1 = System.nanoTime();
                cpu1 = OS.getProcessCpuTime();
                if (dev != null) {
                    dev.close();
                }
            } finally {
                pool.close();
            }
        } finally {
            method.close();
        }
        if (!random && n != blocks) {
            throw new IllegalStateException("scanned " + n + " of " + blocks + " blocks");
        }
        double secs = (t1 - t0) / 1e9;
        double bytes = n * (double) StorageManager.BLCKSZ;
        String note = String.format(Locale.ROOT, "(stream: %.1f reads in progress, %.1f blocks per read, %d waits of %.1f ms,"
                + " distance avg %.0f max %d of %d pins, %d in flight after %d reads / %d buffers%s; huge pages %s)%s",
                stats.averageIosInProgress(), stats.averageIoSizeBlocks(), stats.waits(), stats.waitNanos() / 1e6,
                stats.averageDistance(),
                stats.maxDistance(), stats.capacity(), stats.maxIos(), stats.readsBeforeFullDepth(),
                stats.buffersBeforeFullDepth(), ringNote(method, stats.ioCount()), huge, dev == null ? "" : " (" + dev.note() + ")");
        return new Result("direct " + engine, workload(random), bytes / secs, stats.ioCount() / secs, stats.ioCount(),
                (cpu1 - cpu0) / 1e3 / stats.ioCount(), note);
    }

    /**
     * The same reads through the AIO core and the method alone, without the buffer manager (no
     * pins, mapping, page checks): one 4096-aligned buffer per slot, consumed oldest first and
     * refilled in one batch, as a read stream does. Shows what of a gap to fio is the method's and
     * what is the buffer manager's ({@code --raw}).
     */
    static Result raw(Path file, long blocks, boolean random, int seconds, String engine, int group) throws Exception {
        DirectIoMethod method = direct(engine);
        int depth = random ? RAND_DEPTH : SEQ_DEPTH;
        int bs = random ? StorageManager.BLCKSZ : SEQ_COMBINE * StorageManager.BLCKSZ;
        long n = random ? blocks : blocks / SEQ_COMBINE;
        Random rnd = new Random(7);
        cold(file);
        int fd = org.pageio.posix.DirectIo.open(file, org.pageio.posix.OpenFlags.O_RDONLY, 0);
        DeviceSampler dev = null;
        long ios = 0;
        long t0;
        long t1;
        long cpu0;
        long cpu1;
        try (Arena arena = Arena.ofConfined();
                AioContext ctx = AioContext.create(method, new org.pageio.api.AioConfig(1, depth, SEQ_COMBINE));
                org.pageio.api.IoSession s = ctx.openSession("raw")) {
            MemorySegment[] bufs = new MemorySegment[depth];
            org.pageio.api.IoReturn[] rets = new org.pageio.api.IoReturn[depth];
            org.pageio.api.IoHandle[] hs = new org.pageio.api.IoHandle[depth];
            long[] gens = new long[depth];
            for (int i = 0; i < depth; i++) {
                bufs[i] = arena.allocate(bs, 4096);
                rets[i] = new org.pageio.api.IoReturn();
            }
            long deadline = System.nanoTime() + seconds * 1_000_000_000L;
            long next = 0;
            int head = 0;
            int count = 0;
            dev = DeviceSampler.of(file);
            cpu0 = OS.getProcessCpuTime();
            t0 = System.nanoTime();
            for (;;) {
                while (count > 0 && s.checkDone(hs[head], gens[head])) {
                    if (org.pageio.api.IoResult.status(rets[head].result()) != org.pageio.api.IoResult.OK) {
                        throw new IllegalStateException(rets[head].message());
                    }
                    ios++;
                    head = head + 1 == depth ? 0 : head + 1;
                    count--;
                }
                boolean more = next < n && (!random || (next & 63) != 0 || System.nanoTime() < deadline);
                // group 1: refill every free slot in one submission as soon as one is free; group
                // g: submissions of exactly g reads, each once g slots are free (or nothing is in
                // flight), as a grouped read stream refills (--raw-groups: plugged or not)
                if (more && count < depth && (depth - count >= group || count == 0)) {
                    s.enterBatchMode();
                    int limit = group == 1 ? depth : count + group;
                    while (count < depth && count < limit && next < n) {
                        int slot = (head + count) % depth;
                        long at = random ? rnd.nextLong(blocks) : next;
                        next++;
                        org.pageio.api.IoHandle h = s.acquire();
                        hs[slot] = h;
                        gens[slot] = h.generation();
                        h.setIovec(0, bufs[slot]).setReturn(rets[slot]);
                        h.startReadv(fd, 1, at * bs);
                        count++;
                    }
                    s.exitBatchMode();
                    continue;
                }
                if (count == 0) {
                    break;
                }
                s.await(hs[head], gens[head]);
            }
            t1 = System.nanoTime();
            cpu1 = OS.getProcessCpuTime();
            if (dev != null) {
                dev.close();
            }
        } finally {
            org.pageio.posix.Posix.close(fd, file);
            method.close();
        }
        double secs = (t1 - t0) / 1e9;
        return new Result(rawName(engine, group), workload(random), ios * (double) bs / secs, ios / secs, ios,
                (cpu1 - cpu0) / 1e3 / ios, "(AIO core + method only, no buffer manager" + ringNote(method, ios) + ")"
                        + (dev == null ? "" : " (" + dev.note() + ")"));
    }

    /**
     * What the sessions' rings counted (engine io_uring): io_uring_enter calls per read (to submit,
     * to block for a completion), polls of the completion queue per read and how many found
     * something, and the average number of reads the kernel had in flight just before each
     * submission: the device depth actually kept, which completed reads waiting to be consumed in
     * order do not fill.
     */
    static String ringNote(DirectIoMethod method, long ios) {
        IoUringCounters t = method.ringCounters();
        if (t.rings() == 0 || ios == 0) {
            return "";
        }
        return String.format(Locale.ROOT, "; ring: %.3f enters per read (%.3f submit, %.3f wait), %.2f polls per read"
                + " (%.0f%% found one), %.1f in the kernel at submit + %.1f submitted, %.0f%% into registered buffers",
                (t.submitCalls() + t.waitCalls()) / (double) ios, t.submitCalls() / (double) ios,
                t.waitCalls() / (double) ios, t.polls() / (double) ios,
                t.polls() == 0 ? 0 : 100.0 * t.fruitfulPolls() / t.polls(), t.averageInFlightAtSubmit(),
                t.submitSamples() == 0 ? Double.NaN : t.submitted() / (double) t.submitSamples(),
                t.submitted() == 0 ? 0 : 100.0 * t.fixedIos() / t.submitted());
    }

    /**
     * {@code io_method=direct} with {@code engine} ({@code io_uring}, {@code threads}, {@code auto})
     * and the default {@code io_direct_threads}, as a user configures it; refuses to run when the
     * engine is unavailable here.
     */
    static DirectIoMethod direct(String engine) {
        DirectIoMethod m = new DirectIoMethod(new DirectSettings(DirectSettings.EngineChoice.parse(engine),
                DirectSettings.DEFAULT_IO_DIRECT_THREADS));
        IoMethod.Availability a = m.availability();
        if (!a.available()) {
            m.close();
            throw new IllegalStateException(a.cause());
        }
        return m;
    }
}
