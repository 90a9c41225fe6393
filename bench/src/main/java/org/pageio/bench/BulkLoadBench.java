package org.pageio.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.pageio.api.AioContext;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.method.direct.DirectBenchAccess;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;
import org.pageio.table.LoadProgress;
import org.pageio.table.TableShape;
import org.pageio.table.load.Loader;
import org.pageio.table.load.PageSink;

/**
 * Issue 11's load benchmark, as ratios within one run: the first article's table {@code t}
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
 * Every case writes the same bytes into an empty file. Rounds interleave the cases, rotating the
 * order, after an uncounted small load per case (JIT). Prints each run, the medians, and the
 * ratios issue 11 asks for: each asynchronous method / sync (target ≥ 1.5) and each case / fio of
 * its kind (buffered cases / {@code fio}, O_DIRECT cases / {@code fio-direct}; target ≥ 0.8).
 *
 * <pre>
 * bench/bulk-load.sh [--rows 8000000] [--rounds 3] [--cases sync,worker,io_uring,direct,odirect,buffered,fio,fio-direct]
 *                    [--write-blocks 128] [--in-flight 8] [--dir DIR]
 * </pre>
 */
public final class BulkLoadBench {

    record Run(String who, long bytes, long nanos) {
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
        int inFlight = 8;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rows" -> rows = Long.parseLong(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--cases" -> cases = List.of(args[++i].split(","));
                case "--dir" -> dir = Path.of(args[++i]);
                case "--write-blocks" -> writeBlocks = Integer.parseInt(args[++i]);
                case "--in-flight" -> inFlight = Integer.parseInt(args[++i]);
                case "--no-fio" -> cases = cases.stream().filter(c -> !c.startsWith("fio")).toList();
                default -> throw new IllegalArgumentException("unknown argument " + args[i] + "; use --rows N --rounds N --cases "
                        + String.join(",", ALL) + " --write-blocks N --in-flight N --dir DIR --no-fio");
            }
        }
        for (String c : cases) {
            if (!ALL.contains(c)) {
                throw new IllegalArgumentException("unknown case " + c + "; valid: " + String.join(",", ALL));
            }
        }
        if (cases.stream().anyMatch(c -> c.startsWith("fio"))) {
            try {
                new ProcessBuilder("fio", "--version").start().waitFor();
            } catch (IOException e) {
                throw new IllegalStateException("fio is not installed: apt-get install -y fio (or pass --no-fio)");
            }
        }
        Files.createDirectories(dir);
        TableShape shape = TableShape.T;
        long bytes = shape.blocksFor(rows) * 8192L;
        System.out.printf(Locale.ROOT,
                "load of t: %,d rows, %,d blocks (%.2f GB) in %s; %d rounds; cases %s; bulk sink: %d-block writes (%d kB), %d in flight;"
                        + " %d builders, %d cores%n",
                rows, shape.blocksFor(rows), bytes / 1e9, dir.toAbsolutePath(), rounds, cases, writeBlocks, writeBlocks * 8,
                inFlight, Loader.defaultBuilders(), Runtime.getRuntime().availableProcessors());
        for (String c : cases) { // warm-up (JIT), not counted
            if (!c.startsWith("fio")) {
                run(dir, c, shape, Math.min(rows, 200_000), writeBlocks, inFlight);
            }
        }
        List<Run> runs = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            for (int k = 0; k < cases.size(); k++) {
                String c = cases.get((k + round) % cases.size());
                Run r = c.startsWith("fio") ? fio(dir, bytes, c.equals("fio-direct")) : run(dir, c, shape, rows, writeBlocks, inFlight);
                runs.add(r);
                System.out.printf(Locale.ROOT, "round %d  %-10s %8.2f s  %8.1f MiB/s%n", round + 1, r.who(), r.nanos() / 1e9,
                        r.mibs());
            }
        }
        System.out.println("--- medians");
        for (String c : cases) {
            System.out.printf(Locale.ROOT, "%-10s %8.1f MiB/s%n", c, median(runs, c));
        }
        if (cases.contains("sync")) {
            double sync = median(runs, "sync");
            for (String m : cases) {
                if (!m.equals("sync") && !m.startsWith("fio")) {
                    System.out.printf(Locale.ROOT, "ratio %-10s / sync       = %.2f%s%n", m, median(runs, m) / sync,
                            METHODS.contains(m) ? " (target >= 1.5)" : "");
                }
            }
        }
        for (String m : cases) {
            if (m.startsWith("fio")) {
                continue;
            }
            boolean direct = m.equals("direct") || m.equals("odirect");
            String f = direct ? "fio-direct" : "fio";
            if (cases.contains(f)) {
                System.out.printf(Locale.ROOT, "ratio %-10s / %-10s = %.2f (target >= 0.8)%n", m, f, median(runs, m) / median(runs, f));
            }
        }
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
            case "io_uring" -> org.pageio.method.uring.UringBenchAccess.create(org.pageio.method.uring.UringBenchAccess.defaultPolicy());
            case "direct" -> DirectBenchAccess.create("auto");
            default -> throw new IllegalArgumentException("unknown method " + name);
        };
    }

    static void deleteRelation(Path dir, boolean directIo) throws IOException {
        try (StorageManager smgr = new StorageManager(dir, StorageManager.DEFAULT_SEGMENT_BLOCKS, directIo)) {
            smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 90000)).unlink();
        }
    }

    /** One load of {@code rows} rows of {@code shape} by the table Loader through the sink of case {@code c}. */
    static Run run(Path dir, String c, TableShape shape, long rows, int writeBlocks, int inFlight) throws Exception {
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
        try (StorageManager smgr = new StorageManager(dir, s.segmentBlocks(), directIo);
                AioContext aio = AioContext.create(m, s.aioConfig());
                BufferPool pool = new BufferPool(s, smgr, aio, new StatIo())) {
            SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 90000));
            PageSink.Factory sink = switch (c) {
                case "odirect" -> PageSink.direct();
                case "buffered" -> PageSink.buffered();
                default -> PageSink.bulk(pool, "client backend", writeBlocks, inFlight);
            };
            long t0 = System.nanoTime();
            long blocks = new Loader(sink, Loader.defaultBuilders()).load(rel, shape, rows, 1, true, LoadProgress.NONE);
            return new Run(c, blocks * 8192L, System.nanoTime() - t0);
        } finally {
            if (c.equals("direct")) {
                DirectBenchAccess.stop(m);
            } else if (m instanceof AutoCloseable a) {
                a.close();
            }
        }
    }

    static Run fio(Path dir, long bytes, boolean direct) throws Exception {
        Path file = dir.resolve("fio.dat");
        Files.deleteIfExists(file);
        List<String> cmd = new ArrayList<>(List.of("fio", "--name=seqwrite", "--rw=write", "--bs=128k", "--iodepth=16",
                "--ioengine=io_uring", "--size=" + bytes, "--filename=" + file, "--end_fsync=1", "--output-format=json"));
        if (direct) {
            cmd.add("--direct=1");
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(600, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("fio failed: " + String.join(" ", cmd) + "\n" + out);
        }
        Files.deleteIfExists(file);
        // fio's own figure: its job's write bandwidth (its runtime, without laying out the file)
        java.util.regex.Matcher mt = java.util.regex.Pattern.compile("\"write\"\\s*:\\s*\\{[^}]*?\"bw_bytes\"\\s*:\\s*(\\d+)")
                .matcher(out);
        if (!mt.find()) {
            throw new IOException("no write bandwidth in fio's output:\n" + out);
        }
        long bw = Long.parseLong(mt.group(1));
        return new Run(direct ? "fio-direct" : "fio", bytes, (long) (bytes * 1e9 / bw));
    }
}
