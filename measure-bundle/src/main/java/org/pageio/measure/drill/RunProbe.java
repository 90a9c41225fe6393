package org.pageio.measure.drill;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where a run's time goes, besides its wall time: the process's CPU time (user + system, every
 * thread of the JVM: issuer, I/O workers, io_uring's io-wq workers, AsynchronousFileChannel's
 * pool; kernel copies and read-ahead submission done in those threads included) from
 * {@code /proc/self/stat}, and the read counters of the block device under the data directory
 * from {@code /sys/dev/block/MAJOR:MINOR/stat} (requests, sectors, milliseconds spent in reads),
 * which say how big the requests the device saw were (kernel read-ahead merges and grows them)
 * and how many were in flight on average (read ticks / wall time). The device counters include
 * every other process's reads of that device: on a shared machine they are indicative only.
 * Stateless apart from the device path; any thread. Linux only: elsewhere every figure is -1.
 */
final class RunProbe {

    /** Linux's USER_HZ: /proc times are in 1/100 s on every architecture pageio runs on. */
    private static final long NANOS_PER_TICK = 10_000_000L;

    /**
     * One reading.
     *
     * @param cpuNanos     the process's user + system CPU time, -1 if unknown
     * @param devReads     reads completed by the device, -1 if unknown
     * @param devBytes     bytes read by the device
     * @param devReadMs    milliseconds the device's reads spent in flight (summed over concurrent ones)
     */
    record Snapshot(long cpuNanos, long devReads, long devBytes, long devReadMs) {
    }

    private final Path devStat;

    private RunProbe(Path devStat) {
        this.devStat = devStat;
    }

    /** A probe of this process and of the block device holding {@code dir} (none if it has no sysfs entry, e.g. overlayfs). */
    static RunProbe forDirectory(Path dir) {
        Path stat = null;
        try {
            Object a = Files.getAttribute(dir, "unix:dev");
            if (a instanceof Long dev) {
                long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
                long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
                Path p = Path.of("/sys/dev/block/" + major + ":" + minor + "/stat");
                if (Files.isReadable(p)) {
                    stat = p;
                }
            }
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException e) {
            stat = null; // no device figures
        }
        return new RunProbe(stat);
    }

    boolean hasDevice() {
        return devStat != null;
    }

    Snapshot now() {
        long reads = -1;
        long bytes = -1;
        long ms = -1;
        if (devStat != null) {
            try {
                String[] f = Files.readString(devStat, StandardCharsets.US_ASCII).trim().split("\\s+");
                reads = Long.parseLong(f[0]);
                bytes = Long.parseLong(f[2]) * 512;
                ms = Long.parseLong(f[3]);
            } catch (IOException | RuntimeException e) {
                reads = -1;
            }
        }
        return new Snapshot(processCpuNanos(), reads, bytes, ms);
    }

    /** utime + stime of this process (threads that exited included), or -1. */
    static long processCpuNanos() {
        try {
            String s = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.US_ASCII);
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            // after "pid (comm) ": f[0] is field 3 (state); utime is field 14, stime field 15
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * NANOS_PER_TICK;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
