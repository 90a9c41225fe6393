package org.pageio.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.posix.CallState;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.table.LoadProgress;
import org.pageio.table.TableShape;
import org.pageio.table.load.Loader;
import org.pageio.table.load.PageSink;

/**
 * The loader's throughput next to the disk's raw sequential write bandwidth, measured in the same
 * run, interleaved, so the ratio means something on a busy machine (not a JMH benchmark: each
 * figure is one load of the whole table, fsync included):
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp bench/target/benchmarks.jar org.pageio.bench.LoaderBench DIR [ROWS] [ROUNDS]
 * </pre>
 * ROWS of table {@code t} (default 8,000,000 = 242,425 blocks, 1.99 GB), ROUNDS rounds (default
 * 3). Each round runs, in turn: {@code raw} (a Java loop of 8 MiB buffered {@code pwrite}s of the
 * same size + fsync: the disk as a plain program sees it), {@code raw-direct} (the same with
 * {@code O_DIRECT}), and the loader with {@code old} (one builder, plain pwrites, fsync at the
 * end: the loader's write path before the page sinks), {@code buffered} (fallocate +
 * sync_file_range), {@code direct} (the default: {@code O_DIRECT}) and {@code build-only} (pages
 * built and thrown away: the CPU ceiling), the last three with the default number of builders.
 * Prints each figure as it comes, then medians and each one's ratio to {@code raw} and to
 * {@code raw-direct} of the same round. Deletes its files.
 */
public final class LoaderBench {

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args.length > 0 ? args[0] : "/tmp/pageio-loader-bench");
        long rows = args.length > 1 ? Long.parseLong(args[1]) : TableShape.T.defaultRows();
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        Files.createDirectories(dir);
        long segmentBlocks = new BufMgrSettings.Builder().build().segmentBlocks();
        long blocks = TableShape.T.blocksFor(rows);
        System.out.printf(Locale.ROOT, "LoaderBench: %,d rows of t = %,d blocks (%.2f GB) in %s, %d rounds, %d cores, builders=%d%n",
                rows, blocks, blocks * 8192 / 1e9, dir, rounds, Runtime.getRuntime().availableProcessors(),
                Loader.defaultBuilders());
        Map<String, List<Double>> mbs = new LinkedHashMap<>();
        Map<String, List<Double>> ratio = new LinkedHashMap<>();
        Map<String, List<Double>> ratioDirect = new LinkedHashMap<>();
        String[] cases = {"raw", "raw-direct", "old", "buffered", "direct", "build-only"};
        for (String c : cases) {
            mbs.put(c, new ArrayList<>());
            ratio.put(c, new ArrayList<>());
            ratioDirect.put(c, new ArrayList<>());
        }
        long relNumber = 90_000;
        try (StorageManager smgr = new StorageManager(dir, segmentBlocks, false)) {
            for (int round = 1; round <= rounds; round++) {
                double raw = 0;
                double rawDirect = 0;
                for (String c : cases) {
                    SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber++));
                    double v;
                    long extra = 0;
                    try {
                        long t0 = System.nanoTime();
                        switch (c) {
                            case "raw" -> rawWrite(rel, blocks, false);
                            case "raw-direct" -> rawWrite(rel, blocks, true);
                            default -> {
                                Loader l = switch (c) {
                                    case "old" -> new Loader(PageSink.plain(), 1);
                                    case "buffered" -> new Loader(PageSink.buffered(), Loader.defaultBuilders());
                                    case "direct" -> new Loader(); // the default
                                    case "build-only" -> new Loader((r, b) -> NULL_SINK, Loader.defaultBuilders());
                                    default -> throw new IllegalStateException(c);
                                };
                                l.load(rel, TableShape.T, rows, 1, true, LoadProgress.NONE);
                                extra = l.syncNanos();
                            }
                        }
                        long nanos = System.nanoTime() - t0;
                        v = blocks * 8192 / 1e6 / (nanos / 1e9);
                        if (c.equals("raw")) {
                            raw = v;
                        }
                        if (c.equals("raw-direct")) {
                            rawDirect = v;
                        }
                        mbs.get(c).add(v);
                        ratio.get(c).add(v / raw);
                        ratioDirect.get(c).add(v / rawDirect);
                        System.out.printf(Locale.ROOT, "round %d %-18s %7.0f MB/s  (%.2f s%s)  ratio to raw %.2f, to raw-direct %.2f%n",
                                round, c, v, nanos / 1e9,
                                extra == 0 ? "" : String.format(Locale.ROOT, ", fsync %.2f s", extra / 1e9), v / raw, v / rawDirect);
                    } finally {
                        rel.unlink();
                    }
                }
            }
        }
        System.out.println();
        System.out.println("median over rounds      MB/s (incl. fsync)   ratio to raw   ratio to raw-direct (same round)");
        for (String c : cases) {
            System.out.printf(Locale.ROOT, "%-22s %8.0f %20.2f %14.2f%n", c, median(mbs.get(c)), median(ratio.get(c)),
                    median(ratioDirect.get(c)));
        }
    }

    /** Discards the pages: what building alone costs. */
    private static final PageSink NULL_SINK = new PageSink() {
        @Override
        public void write(long block, MemorySegment pages, int n) {
        }

        @Override
        public void finish() {
        }

        @Override
        public void close() {
        }
    };

    /** 8 MiB pwrites of a pre-filled buffer over {@code blocks} blocks, segment by segment, then fsync. */
    private static void rawWrite(SmgrRelation rel, long blocks, boolean direct) throws Exception {
        int chunkBlocks = Loader.CHUNK_BLOCKS;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate((long) chunkBlocks * 8192, 4096);
            buf.fill((byte) 'x');
            CallState cs = CallState.allocate(a);
            List<Integer> fds = new ArrayList<>();
            int fd = -1;
            long seg = -1;
            for (long b = 0; b < blocks; ) {
                if (b / rel.segmentBlocks() != seg) {
                    seg = b / rel.segmentBlocks();
                    fd = Posix.open(rel.segmentPath(b), OpenFlags.O_WRONLY | OpenFlags.O_CREAT | (direct ? OpenFlags.O_DIRECT : 0),
                            0600);
                    fds.add(fd);
                }
                int n = (int) Math.min(Math.min(chunkBlocks, blocks - b), rel.maxCombine(b));
                long len = (long) n * 8192;
                long r = Posix.pwrite(cs, fd, buf, len, rel.segmentOffset(b));
                if (r != len) {
                    throw new IllegalStateException("pwrite returned " + r);
                }
                b += n;
            }
            for (int i = 0; i < fds.size(); i++) {
                Posix.fsyncOrThrow(fds.get(i), rel.segmentPath(i * rel.segmentBlocks()));
                Posix.close(fds.get(i), rel.segmentPath(i * rel.segmentBlocks()));
            }
        }
    }

    private static double median(List<Double> v) {
        double[] a = v.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(a);
        return a.length == 0 ? 0 : a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
    }
}
