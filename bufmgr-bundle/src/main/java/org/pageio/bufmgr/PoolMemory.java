package org.pageio.bufmgr;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.pageio.bufmgr.BufMgrSettings.HugePages;
import org.pageio.posix.Errno;
import org.pageio.posix.Mman;
import org.pageio.posix.Posix;
import org.pageio.posix.PosixException;

/**
 * The buffer pool's pages and {@code huge_pages}: one private anonymous mapping, its used part
 * aligned to 2 MB and advised {@code MADV_HUGEPAGE} ({@code try}, {@code on}) or
 * {@code MADV_NOHUGEPAGE} ({@code off}), then faulted in at once ({@code MADV_POPULATE_WRITE}), so
 * that every page is in place, zeroed, before the first read, and with {@code try}/{@code on}
 * mostly 2 MB pages: a 512 MB pool is 256 page-table entries instead of 131,072. PostgreSQL maps
 * shared memory with {@code MAP_HUGETLB} (pages reserved by the administrator); a pool here is
 * process-private, so Linux's transparent huge pages serve without a reservation.
 *
 * <p>On random direct reads the gain measured against the same stream in 4 kB pages is small
 * (docs/performance.md), but the setting is PostgreSQL's and fewer page-table entries cost nothing.
 *
 * <p>The advised part is bounded on both sides by a page that is not advised, so its mapping never
 * merges with a neighbour's and {@code /proc/self/smaps} gives its own {@code AnonHugePages}.
 * What the kernel gave is read once, when first asked ({@link #status()}), or at once with
 * {@code on}, which refuses a pool the kernel did not back entirely with huge pages. The
 * mapping is unmapped when the owner's arena closes. Immutable after construction but for the
 * lazily computed status (a benign race: both computations give the same text).
 */
final class PoolMemory {
    static final long HUGE_PAGE = 2L << 20;
    static final Path THP_ENABLED = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
    static final Path THP_DEFRAG = Path.of("/sys/kernel/mm/transparent_hugepage/defrag");
    static final Path SMAPS = Path.of("/proc/self/smaps");

    /** The pool's pages: {@code bytes} long, aligned to 2 MB; invalid once the arena is closed. */
    final MemorySegment pages;
    private final HugePages mode;
    private final long advisedStart;
    private final long advisedLength;
    private volatile String status;

    private PoolMemory(MemorySegment pages, HugePages mode, long advisedStart, long advisedLength) {
        this.pages = pages;
        this.mode = mode;
        this.advisedStart = advisedStart;
        this.advisedLength = advisedLength;
    }

    /**
     * Maps {@code bytes} of zeroed memory for {@code mode}, tied to {@code arena} (closing it
     * unmaps). With {@code on}, throws {@link IllegalStateException} naming the setting, what the
     * kernel gave, why and the way out, when not all of it is in huge pages (nothing stays mapped).
     */
    @SuppressWarnings("restricted") // the segment covers part of the mapping just made
    static PoolMemory map(long bytes, HugePages mode, Arena arena) throws PosixException {
        long page = Posix.pageSize();
        long advisedLength = mode == HugePages.OFF ? roundUp(bytes, page) : roundUp(bytes, HUGE_PAGE);
        long mapLength = advisedLength + HUGE_PAGE + page;
        MemorySegment map = Posix.mmap(mapLength, Mman.PROT_READ | Mman.PROT_WRITE,
                Mman.MAP_PRIVATE | Mman.MAP_ANONYMOUS, -1, 0, null);
        long start = roundUp(map.address() + page, HUGE_PAGE); // at least one page before and after
        MemorySegment advised = MemorySegment.ofAddress(start).reinterpret(advisedLength);
        String what = "shared buffers (" + size(bytes) + ")";
        try {
            Posix.madvise(advised, mode == HugePages.OFF ? Mman.MADV_NOHUGEPAGE : Mman.MADV_HUGEPAGE, what);
            populate(advised, page, what);
        } catch (PosixException | RuntimeException e) {
            unmap(map);
            throw e;
        }
        if (mode == HugePages.ON) {
            long huge = hugeBytes(start);
            if (huge < advisedLength) {
                unmap(map);
                throw new IllegalStateException("huge_pages = on: the kernel backed " + size(huge) + " of the "
                        + size(advisedLength) + " of shared buffers with 2 MB pages: " + reason(huge, readFirstLine(THP_ENABLED),
                        readFirstLine(THP_DEFRAG)) + "; set huge_pages = try to start with normal pages where there are no huge ones");
            }
        }
        MemorySegment pages = MemorySegment.ofAddress(start).reinterpret(bytes, arena, s -> unmap(map));
        return new PoolMemory(pages, mode, start, advisedLength);
    }

    /** Faults every page in now: {@code MADV_POPULATE_WRITE}, or one write per page on kernels before 5.14. */
    private static void populate(MemorySegment advised, long page, String what) throws PosixException {
        try {
            Posix.madvise(advised, Mman.MADV_POPULATE_WRITE, what);
        } catch (PosixException e) {
            if (e.errno() != Errno.EINVAL) {
                throw e; // ENOMEM: no memory for the pool; the message says so
            }
            for (long off = 0; off < advised.byteSize(); off += page) {
                advised.set(ValueLayout.JAVA_BYTE, off, (byte) 0);
            }
        }
    }

    private static void unmap(MemorySegment map) {
        try {
            Posix.munmap(map);
        } catch (PosixException e) {
            throw new IllegalStateException(e.getMessage(), e); // our own mapping: cannot happen
        }
    }

    /**
     * What {@code huge_pages} gave, as PostgreSQL's {@code huge_pages_status} ({@code on} /
     * {@code off}, here also {@code partial}) with the sizes and, when not all, why:
     * {@code "on: 512 MB of 512 MB in 2 MB pages"}, {@code "off: huge_pages = off"}.
     */
    String status() {
        String s = status;
        if (s == null) {
            s = mode == HugePages.OFF ? "off: huge_pages = off"
                    : describe(hugeBytes(), advisedLength, readFirstLine(THP_ENABLED), readFirstLine(THP_DEFRAG));
            status = s;
        }
        return s;
    }

    /** {@link #status()}'s text for {@code huge} of {@code length} bytes in huge pages, given the sysfs settings (null: absent). */
    static String describe(long huge, long length, String enabled, String defrag) {
        if (huge >= length) {
            return "on: " + size(huge) + " of " + size(length) + " in 2 MB pages";
        }
        return (huge == 0 ? "off: " : "partial: ") + size(huge) + " of " + size(length) + " in 2 MB pages ("
                + reason(huge, enabled, defrag) + ")";
    }

    /** Why the kernel gave fewer huge pages than asked, and what would change it. */
    static String reason(long huge, String enabled, String defrag) {
        if (enabled == null) {
            return "this kernel has no transparent huge pages (no " + THP_ENABLED + ")";
        }
        if (selected(enabled).equals("never")) {
            return "transparent huge pages are off: " + THP_ENABLED + " is '" + enabled.trim()
                    + "'; 'madvise' or 'always' allows them";
        }
        return "the kernel had " + (huge == 0 ? "no" : "too few") + " free 2 MB pages (memory is fragmented; "
                + THP_DEFRAG + " is '" + (defrag == null ? "?" : defrag.trim())
                + "': 'defer+madvise' or 'madvise' makes it compact memory for the pool)";
    }

    /** The bracketed choice of a sysfs list such as {@code always [madvise] never}. */
    static String selected(String sysfs) {
        int open = sysfs.indexOf('[');
        int close = sysfs.indexOf(']', open + 1);
        return open >= 0 && close > open ? sysfs.substring(open + 1, close) : sysfs.trim();
    }

    /** Bytes of the advised part in huge pages, from {@code /proc/self/smaps} (0 when it cannot be read). */
    long hugeBytes() {
        return hugeBytes(advisedStart);
    }

    private static long hugeBytes(long advisedStart) {
        List<String> lines;
        try {
            lines = Files.readAllLines(SMAPS);
        } catch (IOException e) {
            return 0;
        }
        return hugeBytes(lines, advisedStart);
    }

    /** The {@code AnonHugePages} of the mapping that starts at {@code start}, in bytes; 0 if none does. */
    static long hugeBytes(List<String> smaps, long start) {
        boolean inside = false;
        for (String line : smaps) {
            int dash = line.indexOf('-');
            int space = line.indexOf(' ');
            if (dash > 0 && space > dash && isHex(line, 0, dash)) { // a mapping's header line
                inside = Long.parseUnsignedLong(line, 0, dash, 16) == start;
            } else if (inside && line.startsWith("AnonHugePages:")) {
                String kb = line.substring("AnonHugePages:".length()).trim();
                return Long.parseLong(kb.substring(0, kb.indexOf(' '))) * 1024;
            }
        }
        return 0;
    }

    private static boolean isHex(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            if (Character.digit(s.charAt(i), 16) < 0) {
                return false;
            }
        }
        return true;
    }

    private static String readFirstLine(Path p) {
        try {
            List<String> l = Files.readAllLines(p);
            return l.isEmpty() ? "" : l.get(0);
        } catch (IOException e) {
            return null;
        }
    }

    private static long roundUp(long v, long to) {
        return (v + to - 1) / to * to;
    }

    /** {@code 512 MB}, {@code 128 kB}. */
    static String size(long bytes) {
        return bytes >= (1L << 20) && bytes % (1L << 20) == 0 ? bytes / (1L << 20) + " MB" : (bytes + 1023) / 1024 + " kB";
    }
}
