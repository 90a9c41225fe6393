package org.pageio.bufmgr;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * How much memory a buffer pool may map on this machine now, and the one-line refusal of a
 * {@code shared_buffers} above it. The pool's pages are faulted in at once when it starts
 * ({@code MADV_POPULATE_WRITE}), so a pool must fit in memory the kernel can hand out without
 * swapping out or killing anything: {@code MemAvailable} of {@code /proc/meminfo}; with
 * {@code vm.overcommit_memory = 2} (no overcommit) also what the commit limit has left,
 * {@code CommitLimit - Committed_AS}. A pool that is being replaced (a restart of the buffer
 * manager unmaps the old pool before it maps the new one) counts as available. PostgreSQL fails
 * such a start with "could not map anonymous shared memory"; here {@code pageio:set} refuses the
 * value and a start refuses it before {@code mmap}.
 *
 * <p>Any thread. Reads {@code /proc} on each call (nothing is cached: memory changes); its only
 * state is the count of bytes the pools of this JVM have mapped.
 */
public final class SharedMemory {

    static final Path MEMINFO = Path.of("/proc/meminfo");
    static final Path OVERCOMMIT = Path.of("/proc/sys/vm/overcommit_memory");

    /** What {@link #refusal} says after the setting and its size, before the figures of the moment. */
    public static final String TOO_LARGE = "needs more memory than this machine can give now";

    /** Bytes of the pools open in this JVM; changed by {@link BufferPool}'s constructor and close (atomic adds). */
    private static final java.util.concurrent.atomic.AtomicLong MAPPED = new java.util.concurrent.atomic.AtomicLong();

    private SharedMemory() {
    }

    static void mapped(long delta) {
        MAPPED.addAndGet(delta);
    }

    /**
     * What a pool may map once the pools open in this JVM are unmapped: the limit for a new
     * {@code shared_buffers}, whose restart of the buffer manager unmaps the pool in use first.
     * Optimistic while another pool (a drill's) is open too; the start checks again.
     */
    public static Limit limitAfterRestart() {
        return limit(MAPPED.get());
    }

    /**
     * What a pool may map now.
     *
     * @param bytes the most a pool may take, in bytes
     * @param basis where that comes from, for messages: {@code MemAvailable 21.9 GB + 128 MB of the
     *              pool in use; vm.overcommit_memory = 0}
     */
    public record Limit(long bytes, String basis) {}

    /**
     * What a pool may map now, with {@code replacedBytes} of a pool that is unmapped before the new
     * one is mapped (0 when none). When {@code /proc} cannot be read, no limit is known: the mapping
     * itself then decides ({@code Long.MAX_VALUE}).
     */
    public static Limit limit(long replacedBytes) {
        List<String> meminfo;
        String overcommit;
        try {
            meminfo = Files.readAllLines(MEMINFO);
        } catch (IOException e) {
            return new Limit(Long.MAX_VALUE, MEMINFO + " cannot be read (" + e + ")");
        }
        try {
            overcommit = Files.readString(OVERCOMMIT).strip();
        } catch (IOException e) {
            overcommit = "0";
        }
        return limit(meminfo, overcommit, replacedBytes);
    }

    /** {@link #limit(long)} from the lines of {@code /proc/meminfo} and {@code vm.overcommit_memory}. */
    static Limit limit(List<String> meminfo, String overcommit, long replacedBytes) {
        long available = kB(meminfo, "MemAvailable:");
        if (available < 0) { // kernels before 3.14
            available = kB(meminfo, "MemFree:") + Math.max(0, kB(meminfo, "Cached:"));
        }
        if (available < 0) {
            return new Limit(Long.MAX_VALUE, MEMINFO + " has no MemAvailable");
        }
        long limit = available + replacedBytes;
        StringBuilder basis = new StringBuilder("MemAvailable ").append(size(available));
        if (replacedBytes > 0) {
            basis.append(" + ").append(size(replacedBytes)).append(" of the pool in use");
        }
        basis.append("; vm.overcommit_memory = ").append(overcommit);
        if (overcommit.equals("2")) {
            long commitLimit = kB(meminfo, "CommitLimit:");
            long committed = kB(meminfo, "Committed_AS:");
            if (commitLimit >= 0 && committed >= 0) {
                long left = Math.max(0, commitLimit - committed) + replacedBytes;
                basis.append(", CommitLimit - Committed_AS ").append(size(Math.max(0, commitLimit - committed)));
                limit = Math.min(limit, left);
            }
        }
        return new Limit(limit, basis.toString());
    }

    /**
     * Null when a pool of {@code sharedBuffers} blocks fits in {@code limit}; else why not and what
     * to do, one line: {@code shared_buffers = 134217728 (1 TB) needs more memory than this machine
     * can give now: at most 22 GB (MemAvailable …); lower shared_buffers, e.g. pageio:set
     * shared_buffers 5GB}.
     */
    public static String refusal(int sharedBuffers, Limit limit) {
        long bytes = (long) sharedBuffers * BufferPool.BLCKSZ;
        if (bytes <= limit.bytes()) {
            return null;
        }
        return "shared_buffers = " + sharedBuffers + " (" + size(bytes) + ") " + TOO_LARGE + ": at most "
                + size(limit.bytes()) + " (" + limit.basis() + "); " + fix(limit);
    }

    /** The way out, for every message about a pool that does not fit. */
    static String fix(Limit limit) {
        String most = limit.bytes() == Long.MAX_VALUE ? null : setting(limit.bytes());
        // a quarter of what there is (PostgreSQL's rule of thumb for shared_buffers), in whole GB or MB
        long quarter = limit.bytes() / 4;
        quarter = quarter >= 1L << 30 ? quarter >> 30 << 30 : quarter >= 1L << 20 ? quarter >> 20 << 20 : quarter;
        String suggest = limit.bytes() == Long.MAX_VALUE ? "128MB" : setting(Math.max(16L * BufferPool.BLCKSZ, quarter));
        return "lower shared_buffers, e.g. pageio:set shared_buffers " + suggest
                + (most == null ? "" : " (at most " + most + " here)");
    }

    /** {@code bytes} rounded down to a value {@code pageio:set} takes: {@code 5GB}, {@code 384MB}, {@code 128kB}. */
    static String setting(long bytes) {
        if (bytes >= 10L << 30 || (bytes >= 1L << 30 && bytes % (1L << 30) == 0)) {
            return (bytes >> 30) + "GB";
        }
        if (bytes >= 1L << 20) {
            return (bytes >> 20) + "MB";
        }
        return (bytes / BufferPool.BLCKSZ * 8) + "kB";
    }

    /** {@code 1 TB}, {@code 21.9 GB}, {@code 128 MB}, {@code 512 kB}. */
    static String size(long bytes) {
        String[] units = {"kB", "MB", "GB", "TB", "PB"};
        double v = bytes / 1024.0;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        double tenths = v >= 100 ? Math.floor(v) : Math.floor(v * 10) / 10; // never rounded up past the limit
        return String.format(Locale.ROOT, tenths == Math.rint(tenths) ? "%.0f" : "%.1f", tenths) + " " + units[u];
    }

    /** The value of a {@code /proc/meminfo} line in bytes ({@code MemAvailable:  23867720 kB}), -1 if absent. */
    private static long kB(List<String> meminfo, String key) {
        for (String line : meminfo) {
            if (line.startsWith(key)) {
                String v = line.substring(key.length()).strip();
                int space = v.indexOf(' ');
                try {
                    return Long.parseLong(space < 0 ? v : v.substring(0, space)) * 1024;
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
    }
}
