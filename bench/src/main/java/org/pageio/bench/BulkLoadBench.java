package org.pageio.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.BulkWriter;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;
import org.pageio.table.HeapPage;
import org.pageio.table.TableShape;
import org.pageio.table.load.Loader;

/**
 * Issue 11's load benchmark, as ratios within one run: the first article's table {@code t}
 * (8,000,000 rows ≈ 1.9 GB by default) built page by page and written through {@link BulkWriter}
 * (128 kB writes, 16 in flight, fsync at the end) with {@code io_method=sync} (every write inline
 * in the loading thread) and with the asynchronous methods ({@code worker}, {@code io_uring}),
 * next to the table bundle's current {@link Loader} (8 MiB pwrites from its own writer thread) and
 * to fio's sequential write bandwidth on a file of the same size ({@code --rw=write --bs=128k
 * --iodepth=16 --ioengine=io_uring --end_fsync=1}, buffered; fio's own bandwidth figure, which leaves
 * out its laying out of the file). Rounds
 * interleave every case, rotating the order, after an uncounted warm-up load per method; the relation file is deleted before each case so
 * every load starts from an empty file. Prints each run, the medians, and the ratios the issue
 * asks for: async / sync (target ≥ 1.5) and async / fio (target ≥ 0.8).
 *
 * <pre>
 * bench/bulk-load.sh [--rows 8000000] [--rounds 3] [--methods sync,worker,io_uring] [--dir DIR] [--no-fio] [--no-loader]
 * </pre>
 */
public final class BulkLoadBench {

    record Run(String who, long bytes, long nanos) {
        double mibs() {
            return bytes / (double) (1 << 20) / (nanos / 1e9);
        }
    }

    public static void main(String[] args) throws Exception {
        long rows = 8_000_000;
        int rounds = 3;
        List<String> methods = List.of("sync", "worker", "io_uring");
        Path dir = Path.of("bench/target/bulk-load");
        boolean fio = true;
        boolean loader = true;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rows" -> rows = Long.parseLong(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--methods" -> methods = List.of(args[++i].split(","));
                case "--dir" -> dir = Path.of(args[++i]);
                case "--no-fio" -> fio = false;
                case "--no-loader" -> loader = false;
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; use --rows N --rounds N --methods sync,worker,io_uring --dir DIR --no-fio --no-loader");
            }
        }
        Files.createDirectories(dir);
        List<String> cases = new ArrayList<>(methods);
        if (loader) {
            cases.add("loader");
        }
        if (fio) {
            cases.add("fio");
        }
        TableShape shape = TableShape.T;
        long bytes = shape.blocksFor(rows) * 8192L;
        System.out.printf(Locale.ROOT, "load of t: %,d rows, %,d blocks (%.2f GB) in %s; %d rounds; cases %s%n", rows,
                shape.blocksFor(rows), bytes / 1e9, dir.toAbsolutePath(), rounds, cases);
        // Warm-up (JIT): a small load per method, not counted.
        for (String m : methods) {
            bulk(dir, m, shape, Math.min(rows, 200_000));
        }
        List<Run> runs = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            for (int k = 0; k < cases.size(); k++) {
                String c = cases.get((k + round) % cases.size());
                Run r = switch (c) {
                    case "fio" -> fio(dir, bytes);
                    case "loader" -> loader(dir, shape, rows);
                    default -> bulk(dir, c, shape, rows);
                };
                runs.add(r);
                System.out.printf(Locale.ROOT, "round %d  %-10s %8.2f s  %8.1f MiB/s%n", round + 1, r.who(), r.nanos() / 1e9,
                        r.mibs());
            }
        }
        System.out.println("--- medians");
        for (String c : cases) {
            System.out.printf(Locale.ROOT, "%-10s %8.1f MiB/s%n", c, median(runs, c));
        }
        if (methods.contains("sync")) {
            double sync = median(runs, "sync");
            for (String m : methods) {
                if (!m.equals("sync")) {
                    System.out.printf(Locale.ROOT, "ratio %s / sync = %.2f (target >= 1.5)%n", m, median(runs, m) / sync);
                }
            }
        }
        if (fio) {
            double f = median(runs, "fio");
            for (String m : cases) {
                if (!m.equals("fio")) {
                    System.out.printf(Locale.ROOT, "ratio %s / fio = %.2f (target >= 0.8 for the async methods)%n", m,
                            median(runs, m) / f);
                }
            }
        }
        deleteRelation(dir);
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
            default -> throw new IllegalArgumentException("unknown method " + name + "; use sync, worker, io_uring");
        };
    }

    static void deleteRelation(Path dir) throws IOException {
        try (StorageManager smgr = new StorageManager(dir, StorageManager.DEFAULT_SEGMENT_BLOCKS, false)) {
            smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 90000)).unlink();
        }
    }

    /** Builds every page of {@code t} (the loader's generator) and writes it through a BulkWriter. */
    static Run bulk(Path dir, String methodName, TableShape shape, long rows) throws Exception {
        deleteRelation(dir);
        IoMethod m = method(methodName);
        BufMgrSettings s = new BufMgrSettings.Builder().sharedBuffers(1024).build();
        try (StorageManager smgr = new StorageManager(dir, s.segmentBlocks(), false);
                AioContext aio = AioContext.create(m, s.aioConfig());
                BufferPool pool = new BufferPool(s, smgr, aio, new StatIo());
                Arena arena = Arena.ofConfined()) {
            SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 90000));
            rel.create();
            long blocks = shape.blocksFor(rows);
            MemorySegment xs = arena.allocate(Math.max(1, shape.textLength()));
            xs.fill((byte) 'x');
            long t0 = System.nanoTime();
            try (BufferSession session = pool.openSession("loader");
                    BulkWriter w = new BulkWriter(session, rel, 0, 16, 16)) {
                long g = 1;
                for (long b = 0; b < blocks; b++) {
                    g = fillPage(w.nextPage(), b, shape, g, rows, 1, xs);
                    w.pageFilled();
                }
                w.finish();
            }
            return new Run(methodName, blocks * 8192L, System.nanoTime() - t0);
        } finally {
            if (m instanceof AutoCloseable c) {
                c.close();
            }
        }
    }

    /** One heap page of {@code t}, as the table bundle's Loader builds it (no checksum: the writer sets it). */
    static long fillPage(MemorySegment page, long b, TableShape shape, long g, long rows, long seed, MemorySegment xs) {
        int natts = shape.columns().size();
        int text = shape.textColumn().offset();
        HeapPage.init(page);
        for (int k = 0; k < shape.rowsPerPage() && g <= rows; k++, g++) {
            int off = HeapPage.addTuple(page, b, shape.tupleLength(), natts);
            for (int c = 0; c < natts - 1; c++) {
                long v = shape.value(c, g, seed);
                if (shape.columns().get(c).type().width() == 8) {
                    HeapPage.setLong(page, off + shape.columns().get(c).offset(), v);
                } else {
                    HeapPage.setInt(page, off + shape.columns().get(c).offset(), (int) v);
                }
            }
            HeapPage.setTextHeader(page, off + text, shape.textLength());
            shape.writeText(page, off + text + 4, g, seed, xs);
        }
        return g;
    }

    static Run loader(Path dir, TableShape shape, long rows) throws Exception {
        deleteRelation(dir);
        try (StorageManager smgr = new StorageManager(dir, StorageManager.DEFAULT_SEGMENT_BLOCKS, false)) {
            SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, 90000));
            long t0 = System.nanoTime();
            long blocks = new Loader().load(rel, shape, rows, 1, true, (done, total, written, nanos) -> { });
            return new Run("loader", blocks * 8192L, System.nanoTime() - t0);
        }
    }

    static Run fio(Path dir, long bytes) throws Exception {
        Path file = dir.resolve("fio.dat");
        Files.deleteIfExists(file);
        List<String> cmd = List.of("fio", "--name=seqwrite", "--rw=write", "--bs=128k", "--iodepth=16", "--ioengine=io_uring",
                "--size=" + bytes, "--filename=" + file, "--end_fsync=1", "--output-format=json");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(600, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("fio failed: " + String.join(" ", cmd) + "\n" + out);
        }
        Files.deleteIfExists(file);
        // fio's own figure: its job's write bandwidth (its runtime, without laying out the file)
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"write\"\\s*:\\s*\\{[^}]*?\"bw_bytes\"\\s*:\\s*(\\d+)")
                .matcher(out);
        if (!m.find()) {
            throw new IOException("no write bandwidth in fio's output:\n" + out);
        }
        long bw = Long.parseLong(m.group(1));
        return new Run("fio", bytes, (long) (bytes * 1e9 / bw));
    }
}
