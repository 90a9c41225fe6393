package org.pageio.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.measure.fio.Fio;
import org.pageio.measure.fio.FioJob;
import org.pageio.measure.fio.FioResult;
import org.pageio.method.direct.DirectIoMethod;
import org.pageio.method.direct.DirectSettings;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.uring.UringIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;
import org.pageio.table.LoadProgress;
import org.pageio.table.TableShape;
import org.pageio.table.load.Loader;
import org.pageio.table.load.PageSink;

/**
 * The load benchmark, as ratios within one run: the cold-scan drill's table {@code t}
 * (8,000,000 rows ≈ 1.9 GB by default) loaded by the table bundle's {@link Loader} (its builder
 * threads, checksums, fsync at the end) through each sink, next to fio's sequential write
 * bandwidth on a file of the same size:
 * <ul>
 *   <li>{@code sync}, {@code worker}, {@code io_uring}, {@code direct}: the bulk sink
 *       ({@link PageSink#bulk}: asynchronous {@code writev}s through that {@code io_method},
 *       {@code --write-blocks} pages each, {@code --in-flight} at once; {@code direct} writes with
 *       O_DIRECT through its own engine);</li>
 *   <li>{@code odirect}: the O_DIRECT sink ({@link PageSink#direct}: 8 MiB pwrites from the
 *       loader's writer thread, one at a time); {@code buffered}: the buffered sink (fallocate +
 *       sync_file_range);</li>
 *   <li>{@code fio}: {@code --rw=write --bs=128k --iodepth=16 --ioengine=io_uring --end_fsync=1},
 *       buffered; {@code fio-direct}: the same with {@code --direct=1}.</li>
 * </ul>
 * Every case writes the same bytes into an empty file. Rounds interleave the cases, in a new
 * (seeded) order each round, after an uncounted small load per case (JIT) and one uncounted
 * full-size load. Prints each run, the medians, and the
 * ratios it reports: each asynchronous method / sync and each case / fio of
 * its kind (buffered cases / {@code fio}, O_DIRECT cases / {@code fio-direct}).
 *
 * <pre>
 * bench/bulk-load.sh [--rows 8000000] [--rounds 3] [--cases sync,worker,io_uring,direct,odirect,buffered,fio,fio-direct]
 *                    [--write-blocks 128] [--in-flight 8] [--builders 2[,0]] [--profile] [--dir DIR]
 * </pre>
 * {@code --builders 0}: the issuing thread builds the pages itself (PostgreSQL's shape, the honest
 * sync-vs-async comparison: with {@code sync} building and writing take turns in one thread);
 * {@code N > 0}: N builder threads and the issuing thread only writes (the loader's default).
 * {@code --profile}: per run, the CPU time of each thread group ({@link ThreadCpu}) and where the
 * issuing thread's wall time went.
 */
public final class BulkLoadBench {

    /**
     * One run; {@code split} (with {@code --profile}, else null), seconds: the issuer's build,
     * sink.write and final fsync wall time, the issuer's system CPU, and the system CPU of the
     * threads that copy for an asynchronous method (I/O workers, io_uring's io-wq threads).
     */
    record Run(String who, long bytes, long nanos, String detail, double[] split) {
        Run(String who, long bytes, long nanos) {
            this(who, bytes, nanos, null, null);
        }

        double mibs() {
            return bytes / (double) (1 << 20) / (nanos / 1e9);
        }
    }

    static final List<String> ALL = List.of("sync", "worker", "io_uring", "direct", "odirect", "buffered", "fio", "fio-direct");
    static final List<String> METHODS = List.of("sync", "worker", "io_uring", "direct");

    public static void main(String[] args) throws Exception {
        long rows = 8_000_000;
        int rounds = 3;
        List<String> cases = ALL;
        Path dir = Path.of("bench/target/bulk-load");
        int writeBlocks = 128;
        List<Integer> inFlights = List.of(-1);
        List<Integer> builderCounts = List.of(0, Loader.defaultBuilders());
        boolean profile = false;
        List<Long> syncEverys = List.of(-1L);
        BenchArgs a = new BenchArgs("bulk-load", "--rows N --rounds N --cases " + String.join(",", ALL)
                + " --write-blocks N --in-flight N[,N] --builders N[,N] --sync-every N[,N] --profile --dir DIR --no-fio", args);
        while (a.next()) {
            switch (a.option()) {
                case "--rows" -> rows = a.longValue();
                case "--rounds" -> rounds = a.intValue();
                case "--cases" -> cases = List.of(a.value().split(","));
                case "--dir" -> dir = Path.of(a.value());
                case "--write-blocks" -> writeBlocks = a.intValue();
                case "--in-flight" -> inFlights = a.listValue(Integer::valueOf);
                case "--builders" -> builderCounts = a.listValue(Integer::valueOf);
                case "--profile" -> profile = true;
                case "--sync-every" -> syncEverys = a.listValue(Long::valueOf);
                case "--no-fio" -> cases = cases.stream().filter(c -> !c.startsWith("fio")).toList();
                default -> throw a.unknown();
            }
        }
        for (String c : cases) {
            if (!ALL.contains(c)) {
                throw a.fail("unknown case " + c + "; valid: " + String.join(",", ALL));
            }
        }
        Fio fio = null;
        if (cases.stream().anyMatch(c -> c.startsWith("fio"))) {
            if (Fio.find().isEmpty()) {
                throw a.fail("fio is not installed: " + Fio.INSTALL + " (or pass --no-fio)");
            }
            fio = a.fio();
        }
        Files.createDirectories(dir);
        TableShape shape = TableShape.T;
        long bytes = shape.blocksFor(rows) * 8192L;
        System.out.printf(Locale.ROOT,
                "load of t: %,d rows, %,d blocks (%.2f GB) in %s; %d rounds; cases %s; bulk sink: %d-block writes (%d kB), %s in flight (-1: 8 with O_DIRECT, 2 buffered);"
                        + " early fsync every %s blocks (0: only at the end; -1: 16384 unless the method is sync); builders %s (0: the issuing thread builds the pages itself), %d cores%n",
                rows, shape.blocksFor(rows), bytes / 1e9, dir.toAbsolutePath(), rounds, cases, writeBlocks, writeBlocks * 8,
                inFlights, syncEverys, builderCounts, Runtime.getRuntime().availableProcessors());
        // the runs: each loader case once per builder count and early-fsync interval (labelled
        // case@bN and case/sN when there are several), fio once
        List<String> labels = new ArrayList<>();
        defaultBuilders = builderCounts.get(0);
        defaultSyncEvery = syncEverys.get(0);
        defaultInFlight = inFlights.get(0);
        for (String c : cases) {
            if (c.startsWith("fio")) {
                labels.add(c);
            } else {
                boolean bulk = METHODS.contains(c);
                for (int b : builderCounts) {
                    for (long se : syncEverys) {
                        for (int f : inFlights) {
                            labels.add(c + (builderCounts.size() > 1 ? "@b" + b : "") + (syncEverys.size() > 1 && bulk ? "/s" + se : "")
                                    + (inFlights.size() > 1 && bulk ? "/f" + f : ""));
                        }
                    }
                }
            }
        }
        labels = labels.stream().distinct().toList();
        for (String l : labels) { // warm-up (JIT), not counted
            if (!l.startsWith("fio")) {
                run(dir, l, shape, Math.min(rows, 200_000), writeBlocks, false);
            }
        }
        // one full-size load, not counted: on this VM the first gigabytes of page cache a process
        // touches after its files were deleted cost several times the copy (3-5 s of system time
        // for 2 GB, whoever writes), which otherwise lands on the first case of round 1
        String first = labels.stream().filter(l -> !l.startsWith("fio")).findFirst().orElse(null);
        if (first != null) {
            Run w = run(dir, first, shape, rows, writeBlocks, false);
            System.out.printf(Locale.ROOT, "warm-up  %-12s %8.2f s  %8.1f MiB/s  (not counted)%n", w.who(), w.nanos() / 1e9, w.mibs());
        }
        List<Run> runs = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            // a new order each round (seeded: the same every run of the bench): on this VM a case
            // can pay for what ran before it (a buffered load after an O_DIRECT one found its page
            // cache copy several times slower in every round of earlier runs, where the order
            // only rotated and every case always had the same predecessor)
            List<String> order = new ArrayList<>(labels);
            java.util.Collections.shuffle(order, new java.util.Random(round));
            for (int k = 0; k < order.size(); k++) {
                String l = order.get(k);
                Run r = l.startsWith("fio") ? fio(fio, dir, bytes, l.equals("fio-direct"))
                        : run(dir, l, shape, rows, writeBlocks, profile);
                runs.add(r);
                System.out.printf(Locale.ROOT, "round %d  %-12s %8.2f s  %8.1f MiB/s  (load average %s)%n", round + 1, r.who(),
                        r.nanos() / 1e9, r.mibs(), loadAverage());
                if (r.detail() != null) {
                    System.out.println("    " + r.detail().replace("\n", "\n    "));
                }
            }
        }
        System.out.println("--- medians");
        for (String l : labels) {
            System.out.printf(Locale.ROOT, "%-12s %8.1f MiB/s%n", l, median(runs, l));
        }
        if (profile) {
            System.out.println("--- profile medians, s (issuer: build, in sink.write, final fsync wall; system CPU of the issuer"
                    + " and of the I/O workers / io-wq threads that copy for it)");
            System.out.printf(Locale.ROOT, "%-16s %6s %6s %6s %8s %8s%n", "", "build", "write", "fsync", "iss.sys", "copy.sys");
            for (String l : labels) {
                if (l.startsWith("fio")) {
                    continue;
                }
                double[] m = new double[5];
                for (int k = 0; k < 5; k++) {
                    int kk = k;
                    List<Double> v = runs.stream().filter(r -> r.who().equals(l) && r.split() != null).map(r -> r.split()[kk])
                            .sorted().toList();
                    m[k] = v.isEmpty() ? Double.NaN : v.get(v.size() / 2);
                }
                System.out.printf(Locale.ROOT, "%-16s %6.2f %6.2f %6.2f %8.2f %8.2f%n", l, m[0], m[1], m[2], m[3], m[4]);
            }
        }
        for (String l : labels) {
            String c = caseOf(l);
            String sync = l.replaceFirst("^[^@/]+", "sync");
            if (!c.equals("sync") && !c.startsWith("fio") && labels.contains(sync)) {
                System.out.printf(Locale.ROOT, "ratio %-12s / %-12s = %.2f%n", l, sync, median(runs, l) / median(runs, sync));
            }
        }
        for (String l : labels) {
            String c = caseOf(l);
            if (c.startsWith("fio")) {
                continue;
            }
            boolean direct = c.equals("direct") || c.equals("odirect");
            String f = direct ? "fio-direct" : "fio";
            if (labels.contains(f)) {
                System.out.printf(Locale.ROOT, "ratio %-12s / %-12s = %.2f%n", l, f, median(runs, l) / median(runs, f));
            }
        }
        System.out.println("load average at the end: " + loadAverage());
        deleteRelation(dir, false);
        Files.deleteIfExists(dir.resolve("fio.dat"));
    }

    static double median(List<Run> runs, String who) {
        List<Double> v = runs.stream().filter(r -> r.who().equals(who)).map(Run::mibs).sorted(Comparator.naturalOrder()).toList();
        return v.isEmpty() ? Double.NaN : v.get(v.size() / 2);
    }

    static IoMethod method(String name) {
        return switch (name) {
            case "sync" -> new SyncIoMethod();
            case "worker" -> new WorkerIoMethod(WorkerSettings.of(2, 8, WorkerSettings.DEFAULT_IDLE_TIMEOUT_MS,
                    WorkerSettings.DEFAULT_LAUNCH_INTERVAL_MS));
            case "io_uring" -> new UringIoMethod(UringIoMethod.DEFAULT_FORCE_ASYNC);
            case "direct" -> new DirectIoMethod(DirectSettings.DEFAULTS);
            default -> throw new IllegalArgumentException("unknown method " + name);
        };
    }

    static void deleteRelation(Path dir, boolean directIo) throws IOException {
        try (StorageManager smgr = new StorageManager(dir, StorageManager.DEFAULT_SEGMENT_BLOCKS, directIo)) {
            smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 90000)).unlink();
        }
    }

    static int defaultBuilders = Loader.defaultBuilders();
    static long defaultSyncEvery = -1;
    static int defaultInFlight = -1;

    static String caseOf(String label) {
        return label.split("[@/]")[0];
    }

    static int buildersOf(String label) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("@b(\\d+)").matcher(label);
        return m.find() ? Integer.parseInt(m.group(1)) : defaultBuilders;
    }

    static int inFlightOf(String label) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("/f(-?\\d+)").matcher(label);
        return m.find() ? Integer.parseInt(m.group(1)) : defaultInFlight;
    }

    static long syncEveryOf(String label) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("/s(-?\\d+)").matcher(label);
        return m.find() ? Long.parseLong(m.group(1)) : defaultSyncEvery;
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "?";
        }
    }

    /**
     * One load of {@code rows} rows of {@code shape} by the table Loader through the sink of case
     * {@code label} ({@code case} or {@code case@bN}: N builder threads, 0 = the issuing thread
     * builds); with {@code profile}, the CPU time per thread and where the issuing thread's time went.
     */
    static Run run(Path dir, String label, TableShape shape, long rows, int writeBlocks, boolean profile)
            throws Exception {
        String c = caseOf(label);
        int builders = buildersOf(label);
        long syncEvery = syncEveryOf(label);
        int inFlight = inFlightOf(label);
        deleteRelation(dir, false);
        boolean bulk = METHODS.contains(c);
        boolean directIo = c.equals("direct");
        IoMethod m = bulk ? method(c) : new SyncIoMethod();
        BufMgrSettings s = new BufMgrSettings.Builder().sharedBuffers(1024).maxSessions(8).build();
        if (directIo) {
            BufMgrSettings.Builder b = s.toBuilder();
            b.directIo = true;
            s = b.build();
        }
        try (BufferManagerCore bufmgr = BufferManagerCore.open(dir, s, m)) {
            StorageManager smgr = bufmgr.storage();
            BufferPool pool = bufmgr.pool();
            SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 90000));
            PageSink.Factory sink = switch (c) {
                case "odirect" -> PageSink.direct();
                case "buffered" -> PageSink.buffered();
                default -> PageSink.bulk(pool, "client backend", writeBlocks, inFlight, syncEvery);
            };
            Loader loader = new Loader(sink, builders);
            ThreadCpu cpu = profile ? new ThreadCpu(20) : null;
            long t0 = System.nanoTime();
            long blocks;
            try {
                // the load runs in a thread of its own, named so the profile can tell the issuing
                // thread (which opens the bulk sink's session and calls every sink method) apart
                long[] out = new long[1];
                Exception[] failed = new Exception[1];
                Thread t = Thread.ofPlatform().name("pageio load issuer").start(() -> {
                    try {
                        out[0] = loader.load(rel, shape, rows, 1, true, LoadProgress.NONE);
                    } catch (Exception e) {
                        failed[0] = e;
                    }
                });
                t.join();
                if (failed[0] != null) {
                    throw failed[0];
                }
                blocks = out[0];
            } finally {
                if (cpu != null) {
                    cpu.close();
                }
            }
            long nanos = System.nanoTime() - t0;
            String detail = null;
            if (profile) {
                detail = String.format(Locale.ROOT, "issuer wall s: build %.2f, wait for builders %.2f, in sink.write %.2f,"
                        + " wait for a slot %.2f, finish (fsync) %.2f; total %.2f%n%s", loader.buildNanos() / 1e9,
                        loader.builtWaitNanos() / 1e9, loader.sinkWriteNanos() / 1e9, loader.slotWaitNanos() / 1e9,
                        loader.syncNanos() / 1e9, nanos / 1e9, cpu.line());
            }
            double[] split = null;
            if (profile) {
                java.util.Map<String, ThreadCpu.Sum> g = cpu.groups();
                split = new double[] {loader.buildNanos() / 1e9, loader.sinkWriteNanos() / 1e9, loader.syncNanos() / 1e9,
                        g.get("issuer").sys / 1e9, (g.get("io-workers").sys + g.get("io_uring-wq").sys) / 1e9};
            }
            return new Run(label, blocks * 8192L, nanos, detail, split);
        } finally {
            if (m instanceof AutoCloseable a) {
                a.close();
            }
        }
    }

    static Run fio(Fio fio, Path dir, long bytes, boolean direct) throws Exception {
        Path file = dir.resolve("fio.dat");
        Files.deleteIfExists(file);
        FioResult r = fio.run(FioJob.sequentialWrite(file, bytes, 128 * 1024, 16, direct).withName("seqwrite"));
        Files.deleteIfExists(file);
        // fio's own figure: its job's write bandwidth (its runtime, without laying out the file)
        return new Run(direct ? "fio-direct" : "fio", bytes, (long) (bytes * 1e9 / r.bwBytes()));
    }
}
