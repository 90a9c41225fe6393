package org.pageio.method.posixaio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link CachedReadsInline.Backoff}: each miss doubles the reads queued untried after it, up to
 * {@link CachedReadsInline#MAX_SKIP}; one hit puts the session back to trying every read.
 */
class CachedReadsBackoffTest {

    /** How many reads the back-off lets through untried before it tries one. */
    static int skipped(CachedReadsInline.Backoff b) {
        int n = 0;
        while (!b.tryNext()) {
            n++;
        }
        return n;
    }

    @Test
    void missesDoubleTheSkipUpToTheCapAndAHitResetsIt() {
        CachedReadsInline.Backoff b = new CachedReadsInline.Backoff();
        assertTrue(b.tryNext(), "a fresh session tries");
        int[] expected = {1, 2, 4, 8, 16, 32, 64, 64, 64};
        for (int want : expected) {
            b.missed();
            assertEquals(want, skipped(b));
        }
        assertEquals(expected.length, b.misses);
        b.hit();
        assertTrue(b.tryNext(), "after a hit the next read is tried");
        b.missed();
        assertEquals(1, skipped(b), "and a miss starts again at one");
    }
}
