package org.pageio.tck;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.posix.PosixException;

/**
 * Relations whose every byte is known: each page is a valid, checksummed page whose payload
 * (everything after the 24-byte header) is derived from the relation number and the block
 * number, so a byte from the wrong relation, block or offset is found by {@link #check}.
 * Pure functions; any thread.
 */
public final class PatternRelation {

    public static final int BLCKSZ = 8192;

    private PatternRelation() {
    }

    public static byte expected(long rel, long block, int i) {
        long h = rel * 0x9E3779B97F4A7C15L + block * 0xC2B2AE3D27D4EB4FL;
        return (byte) ((h >>> ((i & 7) * 8)) ^ i ^ (i >>> 8));
    }

    /** Creates {@code rel}'s files and writes {@code blocks} pattern pages, 64 at a time. */
    public static void fill(SmgrRelation rel, long blocks) throws PosixException {
        rel.create();
        long relNumber = rel.locator().relNumber();
        try (Arena a = Arena.ofConfined()) {
            int chunk = 64;
            MemorySegment buf = a.allocate((long) chunk * BLCKSZ, 4096);
            for (long b = 0; b < blocks; b += chunk) {
                int n = (int) Math.min(chunk, blocks - b);
                for (int i = 0; i < n; i++) {
                    page(relNumber, b + i, buf.asSlice((long) i * BLCKSZ, BLCKSZ));
                }
                rel.write(b, buf, n);
            }
        }
    }

    /** Writes block {@code block} of relation {@code rel} into {@code page}. */
    public static void page(long rel, long block, MemorySegment page) {
        Page.init(page, 0);
        for (int i = Page.HEADER_SIZE; i < BLCKSZ; i++) {
            page.set(ValueLayout.JAVA_BYTE, i, expected(rel, block, i));
        }
        Page.setChecksum(page, block);
    }

    /**
     * Writes generation {@code gen} (1 and up; 0 is the page {@link #fill} wrote) of block
     * {@code block} of {@code rel} into the payload of {@code page}, leaving its header: the number
     * in the payload's first four bytes, every other byte derived from relation, block and
     * generation. The checksum is the writer's (the buffer manager sets it at write time).
     */
    public static void fillGeneration(long rel, long block, int gen, MemorySegment page) {
        page.set(ValueLayout.JAVA_INT_UNALIGNED, Page.HEADER_SIZE, gen);
        for (int i = Page.HEADER_SIZE + 4; i < BLCKSZ; i++) {
            page.set(ValueLayout.JAVA_BYTE, i, expected(rel, block, gen, i));
        }
    }

    /**
     * The generation {@code page} holds of block {@code block} of {@code rel}: 0 for the page
     * {@link #fill} wrote, the number {@link #fillGeneration} wrote, or -1 when any byte is wrong.
     */
    public static int generation(long rel, long block, MemorySegment page) {
        if (wrongBytes(rel, block, page) == 0) {
            return 0;
        }
        int gen = page.get(ValueLayout.JAVA_INT_UNALIGNED, Page.HEADER_SIZE);
        if (gen < 1) {
            return -1;
        }
        for (int i = Page.HEADER_SIZE + 4; i < BLCKSZ; i++) {
            if (page.get(ValueLayout.JAVA_BYTE, i) != expected(rel, block, gen, i)) {
                return -1;
            }
        }
        return gen;
    }

    private static byte expected(long rel, long block, int gen, int i) {
        return (byte) (expected(rel, block, i) ^ (gen * 0x9D) ^ (gen >>> 8));
    }

    /** Number of bytes of {@code page} that differ from block {@code block} of {@code rel} (0 = right). */
    public static int wrongBytes(long rel, long block, MemorySegment page) {
        int wrong = 0;
        for (int i = Page.HEADER_SIZE; i < BLCKSZ; i++) {
            if (page.get(ValueLayout.JAVA_BYTE, i) != expected(rel, block, i)) {
                wrong++;
            }
        }
        return wrong;
    }
}
