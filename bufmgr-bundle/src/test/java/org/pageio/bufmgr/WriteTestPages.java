package org.pageio.bufmgr;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.page.PageVerifier;
import org.pageio.bufmgr.smgr.SmgrRelation;

/**
 * Pages of a known generation: the payload of block {@code b} in generation {@code g} of relation
 * {@code r} derives from (r, b, g), so a page on disk says which write it came from.
 */
final class WriteTestPages {

    private WriteTestPages() {
    }

    static long key(long rel, int gen) {
        return rel * 1_000_003L + gen;
    }

    /** Fills a page (in the pool) with generation {@code gen}'s content; no checksum (write-back computes it). */
    static void fill(MemorySegment page, long rel, long block, int gen) {
        Page.init(page, 0);
        long k = key(rel, gen);
        for (int i = Page.HEADER_SIZE; i < TestPages.BLCKSZ; i++) {
            page.set(ValueLayout.JAVA_BYTE, i, TestPages.expected(k, block, i));
        }
    }

    /**
     * Which generation in {@code [0, maxGen]} the page holds (-1: none matches, i.e. wrong content).
     * Generation 0 is {@link TestPages}'s content.
     */
    static int generation(MemorySegment page, long rel, long block, int maxGen) {
        if (TestPages.check(rel, block, page) == null) {
            return 0;
        }
        for (int g = 1; g <= maxGen; g++) {
            if (TestPages.check(key(rel, g), block, page) == null) {
                return g;
            }
        }
        return -1;
    }

    /** Reads block {@code block} from the relation's files, around every cache of ours. */
    static MemorySegment readFromDisk(Arena arena, SmgrRelation rel, long block) throws IOException {
        Path p = rel.segmentPath(block);
        MemorySegment page = arena.allocate(TestPages.BLCKSZ, 4096);
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            ByteBuffer bb = ByteBuffer.allocate(TestPages.BLCKSZ);
            int n = 0;
            while (n < TestPages.BLCKSZ) {
                int r = ch.read(bb, rel.segmentOffset(block) + n);
                if (r < 0) {
                    throw new IOException("block " + block + " is past the end of " + p);
                }
                n += r;
            }
            page.copyFrom(MemorySegment.ofArray(bb.array()));
        }
        return page;
    }

    /** null when the page passes its checksum and header checks; else the verifier's description. */
    static String verify(MemorySegment page, long block) {
        int code = PageVerifier.verify(page, block, true);
        return code == PageVerifier.VALID || code == PageVerifier.VALID_ZERO ? null : PageVerifier.describe(code, page, block);
    }
}
