package org.pageio.heap.vm;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.ForkNumber;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.heap.PageReads;

/**
 * A heap relation's visibility map, PostgreSQL's {@code visibilitymap.c}: two bits per heap block
 * in the relation's vm fork ({@link ForkNumber#VISIBILITYMAP_FORKNUM}, files {@code <relNumber>_vm},
 * …), {@link #VISIBILITYMAP_ALL_VISIBLE} (every tuple on the heap page is visible to everyone) and
 * {@link #VISIBILITYMAP_ALL_FROZEN} (every tuple is frozen).
 *
 * <p><b>Layout</b>, as PostgreSQL's: a map page is a standard page (header, no line pointers, no
 * special space: {@code PageInit(page, BLCKSZ, 0)}) whose {@link #MAPSIZE} bytes after the
 * {@code MAXALIGN}ed header hold the bits. Heap block {@code b} is in map block
 * {@link #heapBlkToMapBlock} = {@code b / HEAPBLOCKS_PER_PAGE}, byte {@link #heapBlkToMapByte} =
 * {@code (b % HEAPBLOCKS_PER_PAGE) / HEAPBLOCKS_PER_BYTE}, bits from {@link #heapBlkToOffset} =
 * {@code (b % HEAPBLOCKS_PER_BYTE) * BITS_PER_HEAPBLOCK}: all-visible is the lower of the two bits.
 * With 8 KiB pages one map page covers 32,672 heap blocks (255 MiB of heap).
 *
 * <p><b>Through the buffer manager.</b> Map pages are read with {@link BufferSession#readBuffer}
 * (so they are verified and counted in {@code stat_io} under object {@code relation}), changed
 * under the content lock ({@link BufferSession#beginModify} … {@link BufferSession#endModify},
 * which marks the buffer dirty), and written by checkpoints, the background writer and eviction
 * on the bound I/O method, with checksums when {@code data_checksums} is on. The map grows as
 * {@code vm_extend} grows it: {@link #set} on a heap block beyond the map extends the fork with
 * initialised pages ({@link BufferSession#extendBy}, then {@code PageInit}).
 *
 * <p><b>A missing fork</b> (a table loaded before pageio wrote visibility maps) or a map shorter than
 * the heap reads as "no bit set", as in PostgreSQL; never an error.
 *
 * <p><b>What is the caller's job</b>, as in PostgreSQL: setting {@code PD_ALL_VISIBLE} on the heap
 * page before {@link #set} (the page flag and the map bit must agree: the bit may be set only when
 * the flag is), and clearing the flag with {@link #clear}. There is no WAL: pageio has none.
 *
 * <p><b>Who sets bits, and the scans' crash rule.</b> The loader, VACUUM, and the sequential and
 * bitmap heap scans after pruning a page on access ({@code scan_sets_visibility_map}). A scan sets a
 * page's bits only when, after pruning under the page's cleanup lock, it has no {@code LP_DEAD} line
 * and every tuple on it is visible to all; it sets {@code PD_ALL_VISIBLE}, then the bits
 * ({@link #pin} before the heap page is locked, {@link #set(long, int, VmBuffer)} inside it). Without
 * WAL the two pages reach the disk in either order; the bit's claim holds for the page's committed
 * content either way: pruning removed only what no snapshot could see, and every index entry points
 * at a root that leads, before pruning as after, to exactly one tuple visible to all (an
 * {@code LP_NORMAL} visible tuple, or a dead chain ending in one; a dead tuple no chain continues
 * would have left an {@code LP_DEAD} line, which blocks the bit). heap-bundle/README.md, "The
 * visibility map", says what a change must do about a bit whose page flag a crash lost.
 *
 * <p>One instance per session and heap relation; the session's thread only. Readers take no lock
 * ({@code visibilitymap_get_status} neither): a bit read while another session changes it is the
 * old value or the new one.
 */
public final class VisibilityMap {

    /** Bits per heap block ({@code BITS_PER_HEAPBLOCK}). */
    public static final int BITS_PER_HEAPBLOCK = 2;
    /** Heap blocks per map byte ({@code HEAPBLOCKS_PER_BYTE}). */
    public static final int HEAPBLOCKS_PER_BYTE = 8 / BITS_PER_HEAPBLOCK;
    /** Every tuple on the heap page is visible to all ({@code VISIBILITYMAP_ALL_VISIBLE}). */
    public static final int VISIBILITYMAP_ALL_VISIBLE = 0x01;
    /** Every tuple on the heap page is frozen ({@code VISIBILITYMAP_ALL_FROZEN}). */
    public static final int VISIBILITYMAP_ALL_FROZEN = 0x02;
    /** Both bits ({@code VISIBILITYMAP_VALID_BITS}). */
    public static final int VISIBILITYMAP_VALID_BITS = 0x03;
    /** Where the map starts on a map page: {@code MAXALIGN(SizeOfPageHeaderData)} ({@code PageGetContents}). */
    public static final int MAP_OFFSET = Page.maxAlign(Page.HEADER_SIZE);
    /** Map bytes per page: {@code BLCKSZ - MAXALIGN(SizeOfPageHeaderData)} = 8168 ({@code MAPSIZE}). */
    public static final int MAPSIZE = Page.SIZE - MAP_OFFSET;
    /** Heap blocks per map page: 32,672 ({@code HEAPBLOCKS_PER_PAGE}). */
    public static final int HEAPBLOCKS_PER_PAGE = MAPSIZE * HEAPBLOCKS_PER_BYTE;

    /** The map block that holds heap block {@code heapBlk} ({@code HEAPBLK_TO_MAPBLOCK}). */
    public static long heapBlkToMapBlock(long heapBlk) {
        return heapBlk / HEAPBLOCKS_PER_PAGE;
    }

    /** The byte of its map page, counted from {@link #MAP_OFFSET} ({@code HEAPBLK_TO_MAPBYTE}). */
    public static int heapBlkToMapByte(long heapBlk) {
        return (int) (heapBlk % HEAPBLOCKS_PER_PAGE / HEAPBLOCKS_PER_BYTE);
    }

    /** The lowest of its two bits in that byte ({@code HEAPBLK_TO_OFFSET}). */
    public static int heapBlkToOffset(long heapBlk) {
        return (int) (heapBlk % HEAPBLOCKS_PER_BYTE * BITS_PER_HEAPBLOCK);
    }

    /** Map pages a heap of {@code heapBlocks} blocks needs. */
    public static long mapBlocks(long heapBlocks) {
        return (heapBlocks + HEAPBLOCKS_PER_PAGE - 1) / HEAPBLOCKS_PER_PAGE;
    }

    /**
     * Initialises a map page with both bits set for heap blocks {@code [first, end)} of the ones it
     * covers (the loader's map: a table loaded frozen). {@code first} and {@code end - 1} lie in the
     * page's range; no checksum is set.
     */
    public static void initAllFrozen(MemorySegment page, long first, long end) {
        Page.init(page, 0);
        for (long b = first; b < end; b++) {
            int at = MAP_OFFSET + heapBlkToMapByte(b);
            byte v = page.get(ValueLayout.JAVA_BYTE, at);
            page.set(ValueLayout.JAVA_BYTE, at, (byte) (v | VISIBILITYMAP_VALID_BITS << heapBlkToOffset(b)));
        }
    }

    /** The figures of PostgreSQL's {@code pg_visibility_map_summary}: heap pages with each bit set. */
    public record Counts(long allVisible, long allFrozen) {
    }

    private final BufferSession session;
    private final SmgrRelation vm;
    private final BufferAccessStrategy strategy;
    /** Map blocks known to exist (the fork only grows while the heap exists); re-read past it. */
    private long knownBlocks;

    /**
     * The map of {@code heap} (its main fork), read and written through {@code session}.
     *
     * @param strategy the buffer access strategy for map pages, or null for the normal one
     */
    public VisibilityMap(BufferSession session, SmgrRelation heap, BufferAccessStrategy strategy) {
        if (heap.forkNumber() != ForkNumber.MAIN_FORKNUM) {
            throw new IllegalArgumentException("relation " + heap + " is not a heap's main fork");
        }
        this.session = session;
        this.vm = heap.fork(ForkNumber.VISIBILITYMAP_FORKNUM);
        this.strategy = strategy;
    }

    /** The vm fork. */
    public SmgrRelation fork() {
        return vm;
    }

    /** Map blocks on disk now: 0 when the fork does not exist. */
    public long mapBlocks() throws IOException {
        knownBlocks = vm.exists() ? vm.nblocks() : 0;
        return knownBlocks;
    }

    private boolean exists(long mapBlock) throws IOException {
        return mapBlock < knownBlocks || mapBlock < mapBlocks();
    }

    /**
     * The bits of heap block {@code heapBlk} ({@code visibilitymap_get_status}): a combination of
     * {@link #VISIBILITYMAP_ALL_VISIBLE} and {@link #VISIBILITYMAP_ALL_FROZEN}; 0 beyond the map's
     * end or without a map.
     *
     * @throws IOException naming relation, fork, block and what failed when the map page cannot be read
     */
    public int getStatus(long heapBlk) throws IOException {
        long mapBlock = heapBlkToMapBlock(heapBlk);
        if (!exists(mapBlock)) {
            return 0;
        }
        int buf = session.readBuffer(vm, mapBlock, strategy);
        try {
            byte v = session.page(buf).get(ValueLayout.JAVA_BYTE, MAP_OFFSET + heapBlkToMapByte(heapBlk));
            return (v >> heapBlkToOffset(heapBlk)) & VISIBILITYMAP_VALID_BITS;
        } finally {
            session.releaseBuffer(buf);
        }
    }

    /**
     * The map page a scan keeps pinned across calls ({@code visibilitymap_get_status}'s
     * {@code vmbuf}, the index-only scan's {@code ioss_VMBuffer}): a run of heap blocks on the same
     * map page costs one pin. Pages are read through the scan's {@link PageReads}, so they count in
     * its buffers. {@link #close} releases the pin; the session's thread only.
     */
    public static final class VmBuffer implements AutoCloseable {
        private final BufferSession session;
        private final PageReads reads;
        private int buf = -1;
        private long mapBlock = -1;

        VmBuffer(BufferSession session, PageReads reads) {
            this.session = session;
            this.reads = reads;
        }

        @Override
        public void close() {
            if (buf >= 0) {
                session.releaseBuffer(buf);
                buf = -1;
                mapBlock = -1;
            }
        }
    }

    /** A {@link VmBuffer} for {@link #getStatus(long, VmBuffer)}, reading through {@code reads}. */
    public VmBuffer buffer(PageReads reads) {
        return new VmBuffer(session, reads);
    }

    /**
     * {@link #getStatus(long)} keeping the map page pinned in {@code vmbuf} ({@code
     * visibilitymap_get_status(rel, heapBlk, &vmbuf)}): the pin moves only when {@code heapBlk} is on
     * another map page. The bit is read without the content lock, as PostgreSQL's {@code VM_ALL_VISIBLE}.
     */
    public int getStatus(long heapBlk, VmBuffer vmbuf) throws IOException {
        long mapBlock = heapBlkToMapBlock(heapBlk);
        if (vmbuf.mapBlock != mapBlock) {
            vmbuf.close();
            if (!exists(mapBlock)) {
                return 0;
            }
            vmbuf.buf = vmbuf.reads.read(vm, mapBlock, strategy);
            vmbuf.mapBlock = mapBlock;
        }
        byte v = session.page(vmbuf.buf).get(ValueLayout.JAVA_BYTE, MAP_OFFSET + heapBlkToMapByte(heapBlk));
        return (v >> heapBlkToOffset(heapBlk)) & VISIBILITYMAP_VALID_BITS;
    }

    /**
     * Sets {@code flags} for heap block {@code heapBlk} ({@code visibilitymap_set}), extending the map
     * as needed; returns the bits as they were. Setting {@code PD_ALL_VISIBLE} on the heap page first
     * is the caller's job. The map page is marked dirty only when a bit changed.
     *
     * @throws IllegalArgumentException when {@code flags} has bits outside {@link #VISIBILITYMAP_VALID_BITS} or none
     */
    public int set(long heapBlk, int flags) throws IOException {
        checkFlags(flags);
        long mapBlock = heapBlkToMapBlock(heapBlk);
        extend(mapBlock + 1);
        int buf = session.readBuffer(vm, mapBlock, strategy);
        try {
            return change(buf, heapBlk, flags, true);
        } finally {
            session.releaseBuffer(buf);
        }
    }

    /**
     * {@code visibilitymap_pin}: pins in {@code vmbuf} the map page that holds heap block
     * {@code heapBlk}, extending the map to it first, so that {@link #set(long, int, VmBuffer)} can
     * run under the heap page's lock without reading or extending anything (PostgreSQL pins the map
     * page before it locks the heap page). The pin moves only when the map page changes.
     */
    public void pin(long heapBlk, VmBuffer vmbuf) throws IOException {
        long mapBlock = heapBlkToMapBlock(heapBlk);
        if (vmbuf.mapBlock == mapBlock) {
            return;
        }
        vmbuf.close();
        extend(mapBlock + 1);
        vmbuf.buf = vmbuf.reads.read(vm, mapBlock, strategy);
        vmbuf.mapBlock = mapBlock;
    }

    /**
     * {@code visibilitymap_set} on the map page {@link #pin} pinned in {@code vmbuf}: sets
     * {@code flags} for heap block {@code heapBlk} under the map page's content lock, taken inside
     * the heap page's lock the caller holds (PostgreSQL's order); returns the bits as they were.
     * {@code PD_ALL_VISIBLE} is set on the heap page first, by the caller.
     *
     * @throws IllegalStateException when {@code vmbuf} does not pin the map page of {@code heapBlk}
     */
    public int set(long heapBlk, int flags, VmBuffer vmbuf) {
        checkFlags(flags);
        long mapBlock = heapBlkToMapBlock(heapBlk);
        if (vmbuf.mapBlock != mapBlock) {
            throw new IllegalStateException("visibilitymap_set for heap block " + heapBlk + " of " + vm
                    + ": its map block " + mapBlock + " is not pinned (pin it before locking the heap page)");
        }
        return change(vmbuf.buf, heapBlk, flags, true);
    }

    /**
     * Clears {@code flags} for heap block {@code heapBlk} ({@code visibilitymap_clear}); returns
     * whether a bit was set. Nothing to clear beyond the map's end or without a map.
     */
    public boolean clear(long heapBlk, int flags) throws IOException {
        checkFlags(flags);
        long mapBlock = heapBlkToMapBlock(heapBlk);
        if (!exists(mapBlock)) {
            return false;
        }
        int buf = session.readBuffer(vm, mapBlock, strategy);
        try {
            return (change(buf, heapBlk, flags, false) & flags) != 0;
        } finally {
            session.releaseBuffer(buf);
        }
    }

    /** Under the content lock: sets or clears {@code flags}, returns the bits before; dirty only if changed. */
    private int change(int buf, long heapBlk, int flags, boolean set) {
        int at = MAP_OFFSET + heapBlkToMapByte(heapBlk);
        int shift = heapBlkToOffset(heapBlk);
        session.beginModify(buf);
        boolean changed = false;
        try {
            MemorySegment page = session.page(buf);
            if (set && Page.isNew(page)) { // a page extended but never written (a crash): vm_readbuf's PageInit
                Page.init(page, 0);
                changed = true;
            }
            byte v = page.get(ValueLayout.JAVA_BYTE, at);
            byte w = (byte) (set ? v | flags << shift : v & ~(flags << shift));
            if (w != v) {
                page.set(ValueLayout.JAVA_BYTE, at, w);
                changed = true;
            }
            return (v >> shift) & VISIBILITYMAP_VALID_BITS;
        } finally {
            session.endModify(buf, changed);
        }
    }

    /**
     * Heap pages marked all-visible and all-frozen ({@code visibilitymap_count}, the figures of
     * {@code pg_visibility_map_summary}): a pass over every map page; 0 and 0 without a map.
     */
    public Counts count() throws IOException {
        long n = mapBlocks();
        long visible = 0;
        long frozen = 0;
        for (long b = 0; b < n; b++) {
            int buf = session.readBuffer(vm, b, strategy);
            try {
                MemorySegment page = session.page(buf);
                for (int i = 0; i < MAPSIZE; i += 8) {
                    long word = page.get(ValueLayout.JAVA_LONG_UNALIGNED, MAP_OFFSET + i);
                    visible += Long.bitCount(word & 0x5555_5555_5555_5555L);
                    frozen += Long.bitCount(word & 0xAAAA_AAAA_AAAA_AAAAL);
                }
            } finally {
                session.releaseBuffer(buf);
            }
        }
        return new Counts(visible, frozen);
    }

    /**
     * Makes the map at least {@code mapBlocks} pages long ({@code vm_extend}): under the fork's
     * extension lock, each new page is pinned zeroed, initialised ({@code PageInit}) under its content
     * lock and left dirty, so it reaches the file with its checksum by the usual writes.
     */
    private void extend(long mapBlocks) throws IOException {
        if (mapBlocks <= knownBlocks) {
            return;
        }
        int[] one = new int[1];
        synchronized (vm) { // the relation extension lock extendBy takes too
            for (long n = mapBlocks(); n < mapBlocks; n++) {
                session.extendBy(vm, 1, one, strategy);
                int buf = one[0];
                try {
                    session.beginModify(buf);
                    Page.init(session.page(buf), 0);
                    session.endModify(buf, true);
                } finally {
                    session.releaseBuffer(buf);
                }
            }
            knownBlocks = Math.max(knownBlocks, mapBlocks);
        }
    }

    private static void checkFlags(int flags) {
        if (flags == 0 || (flags & ~VISIBILITYMAP_VALID_BITS) != 0) {
            throw new IllegalArgumentException(String.format(java.util.Locale.ROOT,
                    "visibility map flags 0x%02x are not valid: use VISIBILITYMAP_ALL_VISIBLE (0x01), VISIBILITYMAP_ALL_FROZEN (0x02) or both",
                    flags));
        }
    }
}
