package org.pageio.measure.drill;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where a run's time goes, besides its wall time: the process's CPU time (user + system, every
 * thread of the JVM: issuer, I/O workers, io_uring's io-wq workers, AsynchronousFileChannel's
 * pool; kernel copies and read-ahead submission done in those threads included) from
 * {@code clock_gettime(CLOCK_PROCESS_CPUTIME_ID)} (the scheduler's nanosecond run time, threads
 * that exited included; {@code /proc/self/stat}'s 10 ms ticks where that call is not available,
 * see {@link #cpuResolutionNanos}), and the read counters of the block device under the data directory
 * from {@code /sys/dev/block/MAJOR:MINOR/stat} (requests, sectors, milliseconds spent in reads),
 * which say how big the requests the device saw were (kernel read-ahead merges and grows them)
 * and how many were in flight on average (read ticks / wall time), and the process's context switches
 * ({@code getrusage}: how often its threads blocked or were preempted, the cost of handing I/O to
 * other threads). The device counters include
 * every other process's reads of that device: on a shared machine they are indicative only.
 * Stateless apart from the device path; any thread. Linux only: elsewhere every figure is -1.
 */
final class RunProbe {

    /** Linux's USER_HZ: /proc times are in 1/100 s on every architecture pageio runs on. */
    static final long NANOS_PER_TICK = 10_000_000L;

    /** Linux's clock id of the calling process's CPU time (every thread, exited ones included). */
    private static final int CLOCK_PROCESS_CPUTIME_ID = 2;

    /** {@code int clock_gettime(clockid_t, struct timespec *)}, or null where it cannot be called. */
    private static final MethodHandle CLOCK_GETTIME = downcall("clock_gettime");

    /** Whether the nanosecond clock answers here (checked once: a failing call falls back to the ticks for good). */
    private static final boolean FINE_CLOCK = CLOCK_GETTIME != null && clockCpuNanos() >= 0;

    /** Linux's {@code RUSAGE_SELF}: every thread of the calling process, exited ones included. */
    private static final int RUSAGE_SELF = 0;
    /** {@code struct rusage} on LP64 Linux: two timevals, then 14 longs; {@code ru_nvcsw} and {@code ru_nivcsw} are the last two. */
    private static final int RUSAGE_SIZE = 144;
    private static final int RU_NVCSW = 128;
    private static final int RU_NIVCSW = 136;

    /** {@code int getrusage(int, struct rusage *)}, or null where it cannot be called. */
    private static final MethodHandle GETRUSAGE = downcall("getrusage");

    private static MethodHandle downcall(String name) {
        try {
            Linker linker = Linker.nativeLinker();
            return linker.defaultLookup().find(name).map(a -> linker.downcallHandle(a,
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS))).orElse(null);
        } catch (RuntimeException | LinkageError e) {
            return null; // no native access: /proc/self/stat's ticks, no context switches
        }
    }

    /**
     * The granularity of {@link Snapshot#cpuNanos}: 1 ns with {@code clock_gettime}, else
     * {@link #NANOS_PER_TICK} ({@code /proc/self/stat}). A CPU figure is worth printing only when
     * it is many times this ({@link CpuFigures}).
     */
    static long cpuResolutionNanos() {
        return FINE_CLOCK ? 1 : NANOS_PER_TICK;
    }

    /**
     * One reading.
     *
     * @param cpuNanos     the process's user + system CPU time, -1 if unknown
     * @param devReads     reads completed by the device, -1 if unknown
     * @param devBytes     bytes read by the device
     * @param devReadMs    milliseconds the device's reads spent in flight (summed over concurrent ones)
     * @param contextSwitches the process's context switches, voluntary (a thread blocked: a wait, a
     *                     park, a read from the device) and involuntary (preempted), every thread,
     *                     exited ones included ({@code getrusage(RUSAGE_SELF)}), -1 if unknown
     */
    record Snapshot(long cpuNanos, long devReads, long devBytes, long devReadMs, long contextSwitches) {
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
        return new Snapshot(processCpuNanos(), reads, bytes, ms, contextSwitches());
    }

    /** {@code ru_nvcsw + ru_nivcsw} of this process ({@code getrusage(RUSAGE_SELF)}), or -1. */
    static long contextSwitches() {
        if (GETRUSAGE == null) {
            return -1;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ru = a.allocate(RUSAGE_SIZE, 8);
            int rc = (int) GETRUSAGE.invokeExact(RUSAGE_SELF, ru);
            return rc != 0 ? -1 : ru.get(ValueLayout.JAVA_LONG, RU_NVCSW) + ru.get(ValueLayout.JAVA_LONG, RU_NIVCSW);
        } catch (Throwable e) {
            return -1;
        }
    }

    /** The CPU time of this process (every thread, threads that exited included), or -1; in units of {@link #cpuResolutionNanos}. */
    static long processCpuNanos() {
        if (FINE_CLOCK) {
            long ns = clockCpuNanos();
            if (ns >= 0) {
                return ns;
            }
        }
        return tickCpuNanos();
    }

    /** {@code clock_gettime(CLOCK_PROCESS_CPUTIME_ID)} in nanoseconds, or -1. */
    private static long clockCpuNanos() {
        if (CLOCK_GETTIME == null) {
            return -1;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ts = a.allocate(16, 8); // struct timespec on LP64: tv_sec, tv_nsec
            int rc = (int) CLOCK_GETTIME.invokeExact(CLOCK_PROCESS_CPUTIME_ID, ts);
            return rc != 0 ? -1 : ts.get(ValueLayout.JAVA_LONG, 0) * 1_000_000_000L + ts.get(ValueLayout.JAVA_LONG, 8);
        } catch (Throwable e) {
            return -1;
        }
    }

    /** utime + stime of this process from {@code /proc/self/stat} (threads that exited included), in 10 ms ticks, or -1. */
    static long tickCpuNanos() {
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
