package org.pageio.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.pageio.api.AioConfig;
import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.measure.cache.ColdCache;
import org.pageio.measure.fio.Fio;
import org.pageio.measure.fio.FioJob;
import org.pageio.measure.fio.FioResult;
import org.pageio.method.uring.UringIoMethod;
import org.pageio.posix.Fadvise;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/**
 * io_method=io_uring against fio's io_uring engine, in one run, on a cold file:
 * buffered sequential 128 KiB reads at depth 16 (bandwidth against fio) and buffered random
 * 8 KiB reads at depth 64 (IOPS against fio). Before every run, of fio
 * and of ours, the file is evicted from the page cache ({@code posix_fadvise(DONTNEED)}) and its
 * residency checked with {@code mincore} (must be 0: {@link ColdCache}); fio runs through {@link Fio}. Both sides get the same access
 * hint fio gives by default ({@code fadvise_hint=1}: SEQUENTIAL for sequential jobs, RANDOM for
 * random ones) and read each block at most once (fio's random map; a permutation here). Each
 * round first reads the file once (so that a VM host's cache behind the virtual disk is in the
 * same state for every run) and alternates whether fio runs first or last.
 *
 * <p>Ours goes through the whole AIO core (acquire, stage, submit, reap, completion callbacks,
 * reclaim) and consumes completions oldest first, as a read stream does: it refills every free
 * slot, then waits for the oldest I/O. By default a refill is one batch (one {@code io_uring_enter}
 * for all the slots that became free, as a read stream in batch mode does); with
 * {@code --unbatched} each I/O is submitted on its own, one enter each, like fio's default
 * {@code iodepth_batch_submit=1} (rows marked "1/enter"). fio itself runs with its own best
 * ring flags ({@code COOP_TASKRUN|SINGLE_ISSUER|DEFER_TASKRUN}), which this method cannot use
 * (see uring-bundle/README.md).
 *
 * <pre>
 * bench/uring-vs-fio.sh [--dir DIR] [--size-mib 1024] [--seconds 10] [--rounds 2] [--policies NEVER,PG18,PG19,LARGE]
 *                       [--unbatched] [--workloads seq|rand|both] [--keep]
 * </pre>
 * The file (default 1 GiB under bench/target/uring-vs-fio) is deleted at the end unless --keep.
 */
public final class UringVsFioBench {

    static final int SEQ_BS = 128 * 1024;
    static final int SEQ_DEPTH = 16;
    static final int RAND_BS = 8192;
    static final int RAND_DEPTH = 64;

    record Result(String who, String workload, double bytesPerSecond, double iops, long ios) {
        String line() {
            return String.format(Locale.ROOT, "%-22s %-28s %10.1f MiB/s %10.0f IOPS %9d I/Os", who, workload,
                    bytesPerSecond / (1 << 20), iops, ios);
        }
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of("bench/target/uring-vs-fio");
        long sizeMib = 1024;
        int seconds = 10;
        int rounds = 2;
        boolean keep = false;
        boolean unbatched = false;
        String workloads = "both";
        List<String> policies = new ArrayList<>(List.of("NEVER", "PG18", "PG19", "LARGE"));
        BenchArgs a = new BenchArgs("uring-vs-fio", "--dir DIR --size-mib N --seconds N --rounds N"
                + " --policies NEVER,PG18,PG19,LARGE --unbatched --workloads seq|rand|both --keep", args);
        while (a.next()) {
            switch (a.option()) {
                case "--dir" -> dir = Path.of(a.value());
                case "--size-mib" -> sizeMib = a.longValue();
                case "--seconds" -> seconds = a.intValue();
                case "--rounds" -> rounds = a.intValue();
                case "--policies" -> policies = List.of(a.value().split(","));
                case "--keep" -> keep = true;
                case "--unbatched" -> unbatched = true;
                case "--workloads" -> workloads = a.value();
                default -> throw a.unknown();
            }
        }
        Fio fio = a.fio();
        Files.createDirectories(dir);
        Path file = dir.resolve("cold-" + sizeMib + "m.dat");
        long size = sizeMib << 20;
        prepare(file, size);
        System.out.printf(Locale.ROOT, "file %s, %d MiB; io_uring default IOSQE_ASYNC policy %s; %s%n", file, sizeMib,
                UringIoMethod.DEFAULT_FORCE_ASYNC, fio.version());
        List<Result> all = new ArrayList<>();
        int fd = Posix.open(file, OpenFlags.O_RDONLY, 0);
        try {
            for (int round = 1; round <= rounds; round++) {
                System.out.println("--- round " + round);
                prime(file, size);
                for (boolean random : new boolean[] {false, true}) {
                    if (workloads.equals(random ? "seq" : "rand")) {
                        continue;
                    }
                    // fio first in odd rounds, last in even ones: neither side always meets the
                    // virtual disk's host cache in the same state.
                    boolean fioFirst = round % 2 == 1;
                    if (fioFirst) {
                        all.add(print(fio(fio, file, size, random, seconds)));
                    }
                    for (String p : policies) {
                        all.add(print(ours(file, fd, size, random, seconds, p, true)));
                        if (unbatched) {
                            all.add(print(ours(file, fd, size, random, seconds, p, false)));
                        }
                    }
                    if (!fioFirst) {
                        all.add(print(fio(fio, file, size, random, seconds)));
                    }
                }
            }
        } finally {
            Posix.close(fd, file);
            if (!keep) {
                Files.deleteIfExists(file);
            }
        }
        System.out.println("--- ratios, ours / fio: best round / median round (" + rounds + " rounds)");
        for (boolean random : new boolean[] {false, true}) {
            if (workloads.equals(random ? "seq" : "rand")) {
                continue;
            }
            String w = workload(random);
            double fioBest = stat(all, "fio", w, random, true);
            double fioMedian = stat(all, "fio", w, random, false);
            for (String p : policies) {
                for (String mode : unbatched ? List.of("", " 1/enter") : List.of("")) {
                    String who = "io_uring " + p + mode;
                    System.out.printf(Locale.ROOT, "%-22s io_uring %-14s %-9s %.3f / %.3f x fio%n", w,
                            p + mode, random ? "IOPS" : "bandwidth", stat(all, who, w, random, true) / fioBest,
                            stat(all, who, w, random, false) / fioMedian);
                }
            }
        }
    }

    /** {@code 0 … n-1} in a fixed random order (seed 7): each block read at most once, as fio's random map does. */
    static int[] permutation(int n) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Random rnd = new Random(7);
        for (int i = n - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    static String workload(boolean random) {
        return random ? "randread 8k depth 64" : "read 128k depth 16";
    }

    /** The best or the median of the rounds of {@code who} on workload {@code w}. */
    static double stat(List<Result> all, String who, String w, boolean random, boolean best) {
        List<Double> xs = new ArrayList<>();
        for (Result r : all) {
            if (r.who().equals(who) && r.workload().equals(w)) {
                xs.add(random ? r.iops() : r.bytesPerSecond());
            }
        }
        xs.sort(null);
        if (xs.isEmpty()) {
            return Double.NaN;
        }
        if (best) {
            return xs.get(xs.size() - 1);
        }
        int n = xs.size();
        return n % 2 == 1 ? xs.get(n / 2) : (xs.get(n / 2 - 1) + xs.get(n / 2)) / 2;
    }

    static Result print(Result r) {
        System.out.println(r.line());
        return r;
    }

    /** Writes the file once (incompressible bytes), fsyncs it so that its pages can be dropped. */
    static void prepare(Path file, long size) throws IOException {
        if (Files.exists(file) && Files.size(file) == size) {
            return;
        }
        Random rnd = new Random(42);
        ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
        byte[] chunk = new byte[1 << 20];
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            for (long off = 0; off < size; off += chunk.length) {
                rnd.nextBytes(chunk);
                b.clear();
                b.put(chunk, 0, (int) Math.min(chunk.length, size - off)).flip();
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            }
            ch.force(true);
        }
    }

    /**
     * Reads the whole file once, so that the layer below this machine's page cache (on a VM, the
     * host's cache behind the virtual disk) holds it the same way for every run of the round; each
     * run then evicts it from this machine's page cache again.
     */
    static void prime(Path file, long size) throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long pos = 0;
            while (pos < size) {
                b.clear();
                int n = ch.read(b, pos);
                if (n < 0) {
                    break;
                }
                pos += n;
            }
        }
    }

    /** Drops the file's pages and proves them gone ({@link ColdCache#requireCold}: 0 pages resident). */
    static void evict(Path file) throws IOException {
        ColdCache.requireCold(List.of(file));
    }

    // ------------------------------------------------------------------ fio

    static Result fio(Fio fio, Path file, long size, boolean random, int seconds) throws Exception {
        evict(file);
        FioJob job = (random ? FioJob.randomRead(List.of(file), RAND_BS, RAND_DEPTH, false)
                : FioJob.sequentialRead(List.of(file), SEQ_BS, SEQ_DEPTH, false))
                .withName(random ? "randread" : "seqread").withSize(size).withInvalidate(true).withRuntime(random ? seconds : 0);
        FioResult r = fio.run(job);
        return new Result("fio", workload(random), r.bwBytes(), r.iops(), r.ioBytes() / (random ? RAND_BS : SEQ_BS));
    }

    // ------------------------------------------------------------------ ours

    static Result ours(Path file, int fd, long size, boolean random, int seconds, String policy, boolean batch)
            throws Exception {
        IoMethod method = new UringIoMethod(UringIoMethod.ForceAsync.parse(policy));
        int depth = random ? RAND_DEPTH : SEQ_DEPTH;
        int bs = random ? RAND_BS : SEQ_BS;
        long blocks = size / bs;
        int[] order = random ? permutation((int) blocks) : null;
        evict(file);
        // fio's default fadvise_hint: the same access pattern hint on the same descriptor.
        Posix.fadvise(fd, 0, 0, random ? Fadvise.POSIX_FADV_RANDOM : Fadvise.POSIX_FADV_SEQUENTIAL, file);
        long ios = 0;
        long bytes = 0;
        long start;
        long end;
        try (Arena arena = Arena.ofConfined();
                AioContext ctx = AioContext.create(method, new AioConfig(1, depth, 16));
                IoSession s = ctx.openSession("bench")) {
            MemorySegment[] bufs = new MemorySegment[depth];
            IoReturn[] rets = new IoReturn[depth];
            IoHandle[] hs = new IoHandle[depth];
            long[] gens = new long[depth];
            for (int i = 0; i < depth; i++) {
                bufs[i] = arena.allocate(bs, 4096);
                rets[i] = new IoReturn();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            long next = 0;
            int head = 0; // oldest I/O in flight (slots are used in a circle, in submission order)
            int count = 0;
            start = System.nanoTime();
            for (;;) {
                // Consume what completed, oldest first, as a read stream does.
                while (count > 0 && s.checkDone(hs[head], gens[head])) {
                    long r = rets[head].result();
                    if (IoResult.status(r) != IoResult.OK) {
                        throw new IllegalStateException(rets[head].message());
                    }
                    bytes += IoResult.result(r);
                    ios++;
                    head = head + 1 == depth ? 0 : head + 1;
                    count--;
                }
                boolean more = next < blocks && (!random || System.nanoTime() < deadline);
                if (more && count < depth) {
                    // Refill every free slot: in one batch (one io_uring_enter), or one enter each.
                    if (batch) {
                        s.enterBatchMode();
                    }
                    while (count < depth && next < blocks) {
                        int slot = (head + count) % depth;
                        long block = random ? order[(int) next] : next;
                        next++;
                        IoHandle h = s.acquire();
                        hs[slot] = h;
                        gens[slot] = h.generation();
                        h.setIovec(0, bufs[slot]).setFlags(IoHandle.FLAG_BUFFERED).setReturn(rets[slot]);
                        h.startReadv(fd, 1, block * bs);
                        count++;
                    }
                    if (batch) {
                        s.exitBatchMode();
                    }
                    continue;
                }
                if (count == 0) {
                    break;
                }
                s.await(hs[head], gens[head]); // blocks in the kernel until the oldest completed
            }
            end = System.nanoTime();
        } finally {
            Posix.fadvise(fd, 0, 0, Fadvise.POSIX_FADV_NORMAL, file);
        }
        double secs = (end - start) / 1e9;
        return new Result("io_uring " + policy + (batch ? "" : " 1/enter"), workload(random), bytes / secs, ios / secs,
                ios);
    }
}
