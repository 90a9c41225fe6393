package org.pageio.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * What the block device under a file saw during one pass: the kernel's own counters from
 * {@code /sys/dev/block/MAJ:MIN/stat} at the start and end (reads completed and merged, sectors,
 * milliseconds reads spent queued or in service, milliseconds the device was busy) and, with
 * {@code --sample-inflight}, from a sampler thread, the device's reads in flight ({@code /sys/dev/block/MAJ:MIN/inflight}) every
 * {@value #SAMPLE_MICROS} µs. Structural figures, robust on a shared machine: the average request
 * size and queue depth the device was given do not depend on how fast the pass ran.
 *
 * <ul>
 * <li><b>depth</b> = Δ read ticks ÷ Δ wall time: the average number of reads queued or in service
 * (the {@code aqu-sz} of iostat, reads only);</li>
 * <li><b>busy depth</b> = Δ read ticks ÷ Δ io ticks: the same, counted only while the device had
 * something to do (a fast consumer-bound pass has idle gaps that lower the plain average);</li>
 * <li><b>sampled</b>: the mean of the sampled in-flight reads, and the share of samples with 0, 1–3,
 * 4–7, 8–15 and 16 or more (a pass that ramps up slowly shows in the low buckets);</li>
 * <li><b>request</b> = Δ sectors × 512 ÷ Δ reads completed, after the block layer's merges.</li>
 * </ul>
 * Other processes' reads on the same device count too: on a shared machine compare passes of the
 * same round, and read the figure as the device's view, not ours alone.
 */
final class DeviceSampler implements AutoCloseable {

    static final int SAMPLE_MICROS = 1000;

    private final Path stat;
    private final Path inflight;
    private final long[] start;
    private final long wall0 = System.nanoTime();
    private final Thread thread;
    private volatile boolean stop;
    // written by the sampler thread, read after join (happens-before through Thread.join)
    private long samples;
    private long inflightSum;
    private final long[] buckets = new long[5];
    private long[] end;
    private long wall1;

    private DeviceSampler(Path dir, boolean sample) throws IOException {
        this.stat = dir.resolve("stat");
        this.inflight = dir.resolve("inflight");
        this.start = read(stat);
        if (sample) {
            this.thread = new Thread(this::run, "device sampler");
            thread.setDaemon(true);
            thread.start();
        } else {
            this.thread = null;
        }
    }

    /**
     * Whether passes also sample the device's reads in flight from a thread (bench flag
     * {@code --sample-inflight}). Off by default: the counters before and after cost nothing during
     * the pass, while a thread waking every millisecond on a two-vCPU machine may cost the pass it
     * measures (random reads at depth 64 went 0.74 against 0.78 × fio with it, within the noise).
     */
    static volatile boolean sampleInflight;

    /** A sampler for the device holding {@code file}, or null when the kernel does not say which (no sysfs). */
    static DeviceSampler of(Path file) {
        try {
            Path dir = sysfsDir(file);
            if (!Files.isReadable(dir.resolve("stat")) || !Files.isReadable(dir.resolve("inflight"))) {
                return null;
            }
            return new DeviceSampler(dir, sampleInflight);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return null;
        }
    }

    /** The device's name (e.g. {@code vda}), for the run's header. */
    static String name(Path file) {
        try {
            Path dir = sysfsDir(file);
            return dir.toRealPath().getFileName() + " (" + dir.getFileName() + ")";
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "unknown device";
        }
    }

    /** {@code /sys/dev/block/MAJ:MIN} of the device holding {@code file} (Linux's dev_t encoding). */
    private static Path sysfsDir(Path file) throws IOException {
        long dev = (Long) Files.getAttribute(file, "unix:dev");
        long major = ((dev >>> 8) & 0xfffL) | ((dev >>> 32) & ~0xfffL);
        long minor = (dev & 0xffL) | ((dev >>> 12) & ~0xffL);
        return Path.of("/sys/dev/block/" + major + ":" + minor);
    }

    private void run() {
        long period = SAMPLE_MICROS * 1000L;
        long next = System.nanoTime();
        // one descriptor and one buffer for the whole pass: a pread at offset 0 makes sysfs render
        // the attribute again, so a sample is one system call and no allocation (the sampler shares
        // the machine's two CPUs with the pass it measures)
        java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocateDirect(64);
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(inflight)) {
            while (!stop) {
                buf.clear();
                int n = ch.read(buf, 0);
                long reads = 0;
                int i = 0;
                while (i < n && buf.get(i) == ' ') {
                    i++;
                }
                for (; i < n && buf.get(i) >= '0' && buf.get(i) <= '9'; i++) {
                    reads = reads * 10 + (buf.get(i) - '0');
                }
                samples++;
                inflightSum += reads;
                buckets[reads == 0 ? 0 : reads < 4 ? 1 : reads < 8 ? 2 : reads < 16 ? 3 : 4]++;
                next = pace(next, period);
            }
        } catch (IOException e) {
            // no samples from here on: the note says how many were taken through the averages
        }
    }

    private static long pace(long next, long period) {
        next += period;
        long sleep = next - System.nanoTime();
        if (sleep > 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(sleep);
            return next;
        }
        return System.nanoTime();
    }

    private static long[] read(Path stat) throws IOException {
        String[] f = Files.readString(stat).trim().split("\\s+");
        long[] v = new long[f.length];
        for (int i = 0; i < f.length; i++) {
            v[i] = Long.parseLong(f[i]);
        }
        return v;
    }

    @Override
    public void close() {
        wall1 = System.nanoTime();
        stop = true;
        try {
            if (thread != null) {
                thread.join();
            }
            end = read(stat);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            end = null;
        }
    }

    /** Reads the device completed during the pass (after merging). */
    long reads() {
        return end == null ? 0 : end[0] - start[0];
    }

    /** Average bytes per device read. */
    double requestBytes() {
        long r = reads();
        return r == 0 ? Double.NaN : (end[2] - start[2]) * 512.0 / r;
    }

    /** Average reads queued or in service over the pass. */
    double depth() {
        double ms = (wall1 - wall0) / 1e6;
        return end == null || ms <= 0 ? Double.NaN : (end[3] - start[3]) / ms;
    }

    /** Average reads queued or in service while the device was busy. */
    double busyDepth() {
        long busy = end == null ? 0 : end[9] - start[9];
        return busy == 0 ? Double.NaN : (end[3] - start[3]) / (double) busy;
    }

    /** Share of the pass the device was busy. */
    double utilization() {
        double ms = (wall1 - wall0) / 1e6;
        return end == null || ms <= 0 ? Double.NaN : (end[9] - start[9]) / ms;
    }

    double sampledDepth() {
        return samples == 0 ? Double.NaN : inflightSum / (double) samples;
    }

    /** One line: request size, depth (average, while busy, sampled) and the sampled depth's spread. */
    String note() {
        if (end == null) {
            return "device: no figures";
        }
        long m = end[1] - start[1];
        if (thread == null) {
            return String.format(Locale.ROOT, "device: %d reads of %.0f kB (%d merged), depth %.1f (busy %.1f, %.0f%% busy)",
                    reads(), requestBytes() / 1024, m, depth(), busyDepth(), 100 * utilization());
        }
        return String.format(Locale.ROOT,
                "device: %d reads of %.0f kB (%d merged), depth %.1f (busy %.1f, %.0f%% busy), sampled %.1f in %d"
                        + " samples [0: %.0f%%, 1-3: %.0f%%, 4-7: %.0f%%, 8-15: %.0f%%, 16+: %.0f%%]",
                reads(), requestBytes() / 1024, m, depth(), busyDepth(), 100 * utilization(), sampledDepth(), samples,
                pct(0), pct(1), pct(2), pct(3), pct(4));
    }

    private double pct(int b) {
        return samples == 0 ? Double.NaN : 100.0 * buckets[b] / samples;
    }
}
