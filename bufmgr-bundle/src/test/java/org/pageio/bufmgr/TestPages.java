package org.pageio.bufmgr;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.posix.PosixException;

/** Relations with known content: each page's payload derives from the relation number and block. */
final class TestPages {

    static final int BLCKSZ = 8192;

    private TestPages() {
    }

    static byte expected(long rel, long block, int i) {
        long h = rel * 0x9E3779B97F4A7C15L + block * 0xC2B2AE3D27D4EB4FL;
        return (byte) ((h >>> ((i & 7) * 8)) ^ i);
    }

    /** Writes {@code blocks} valid pages (header, payload, checksum) to a new relation. */
    static void fill(SmgrRelation rel, long blocks) throws PosixException {
        rel.create();
        try (Arena a = Arena.ofConfined()) {
            int chunk = 64;
            MemorySegment buf = a.allocate((long) chunk * BLCKSZ, 4096);
            for (long b = 0; b < blocks; b += chunk) {
                int n = (int) Math.min(chunk, blocks - b);
                for (int i = 0; i < n; i++) {
                    page(rel.locator().relNumber(), b + i, buf.asSlice((long) i * BLCKSZ, BLCKSZ));
                }
                rel.write(b, buf, n);
            }
        }
    }

    static void page(long rel, long block, MemorySegment page) {
        Page.init(page, 0);
        for (int i = Page.HEADER_SIZE; i < BLCKSZ; i++) {
            page.set(ValueLayout.JAVA_BYTE, i, expected(rel, block, i));
        }
        Page.setChecksum(page, block);
    }

    /** null when {@code page} holds block {@code block} of relation {@code rel}; else what is wrong. */
    static String check(long rel, long block, MemorySegment page) {
        for (int i = Page.HEADER_SIZE; i < BLCKSZ; i++) {
            if (page.get(ValueLayout.JAVA_BYTE, i) != expected(rel, block, i)) {
                return "wrong byte " + i + " in block " + block + " of relation " + rel;
            }
        }
        return null;
    }

    /**
     * Damages {@code block} of {@code rel} on disk: XORs the byte at offset 4000 of the page (payload,
     * so the header stays sane and the checksum fails) with {@code mask}.
     */
    static void corrupt(SmgrRelation rel, long block, int mask) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(rel.segmentPath(block).toFile(), "rw")) {
            long pos = rel.segmentOffset(block) + 4000;
            f.seek(pos);
            int b = f.read();
            f.seek(pos);
            f.write(b ^ mask);
        }
    }
}
