package org.pageio.bufmgr.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link PairedReads}: when pairs start, what they do to the distance, and what ends them. */
class PairedReadsTest {

    static final int MAX_PINNED = 272;
    static final int COMBINE = 16;

    @Test
    void appliesToPg19SequentialBatchingStreamsWhoseReadsStartAtOnce() {
        assertNotNull(PairedReads.forStream(true, true, true, false, MAX_PINNED, COMBINE));
        assertNull(PairedReads.forStream(false, true, true, false, MAX_PINNED, COMBINE), "pg18");
        assertNull(PairedReads.forStream(true, false, true, false, MAX_PINNED, COMBINE), "not batching");
        assertNull(PairedReads.forStream(true, true, false, false, MAX_PINNED, COMBINE), "random");
        assertNull(PairedReads.forStream(true, true, true, true, MAX_PINNED, COMBINE), "io_method=sync");
    }

    /** One look-ahead that staged a read and found every read over once submitted. */
    static int overAtSubmission(PairedReads p, int distance) {
        p.lookAheadStarts();
        p.readStaged(false);
        assertTrue(p.readsToCheck());
        return p.submitted(true, distance);
    }

    @Test
    void fourLookAheadsInARowOverAtSubmissionStartPairsOfFullSizeReads() {
        PairedReads p = new PairedReads(MAX_PINNED, COMBINE);
        int distance = 1;
        for (int i = 1; i < PairedReads.COMPLETE_AT_SUBMISSION_STREAK; i++) {
            distance = overAtSubmission(p, distance);
            assertFalse(p.pairing(), "after " + i);
            assertEquals(1, distance, "the distance is PostgreSQL's until pairs start");
        }
        distance = overAtSubmission(p, distance);
        assertTrue(p.pairing());
        assertEquals(PairedReads.READS_PER_SUBMISSION_WHEN_COMPLETE * COMBINE, distance, "two full-size reads");
        assertTrue(p.drainFirst(1), "a pairing stream skips look-aheads while buffers are pinned");
        assertFalse(p.drainFirst(0), "and refills once the consumer has drained them");
    }

    @Test
    void thePairIsCappedByMaxPinned() {
        PairedReads p = new PairedReads(20, COMBINE);
        int distance = 1;
        for (int i = 0; i < PairedReads.COMPLETE_AT_SUBMISSION_STREAK; i++) {
            distance = overAtSubmission(p, distance);
        }
        assertEquals(20, distance);
    }

    @Test
    void aReadNotOverBeforePairsStartedCountsAgain() {
        PairedReads p = new PairedReads(MAX_PINNED, COMBINE);
        overAtSubmission(p, 1);
        overAtSubmission(p, 1);
        overAtSubmission(p, 1);
        p.lookAheadStarts();
        p.readStaged(false);
        p.submitted(false, 1);
        assertFalse(p.pairing());
        for (int i = 0; i < PairedReads.COMPLETE_AT_SUBMISSION_STREAK; i++) {
            overAtSubmission(p, 1);
        }
        assertTrue(p.pairing(), "four in a row again");
    }

    @Test
    void aReadNotOverOncePairsStartedRulesThemOutForTheStream() {
        PairedReads p = new PairedReads(MAX_PINNED, COMBINE);
        for (int i = 0; i < PairedReads.COMPLETE_AT_SUBMISSION_STREAK; i++) {
            overAtSubmission(p, 1);
        }
        assertTrue(p.pairing());
        assertEquals(5, p.submitted(false, 5), "the distance is left as it is");
        assertFalse(p.pairing());
        for (int i = 0; i < 10; i++) {
            assertEquals(3, overAtSubmission(p, 3), "no pairs for the rest of the stream");
        }
        assertFalse(p.pairing());
        p.reset();
        for (int i = 0; i < PairedReads.COMPLETE_AT_SUBMISSION_STREAK; i++) {
            overAtSubmission(p, 1);
        }
        assertTrue(p.pairing(), "reset: the stream may pair again");
    }

    @Test
    void readsExecutedAtStagingAreNotChecked() {
        PairedReads p = new PairedReads(MAX_PINNED, COMBINE);
        p.lookAheadStarts();
        p.readStaged(true); // io_method=sync style: over when staged
        assertFalse(p.readsToCheck());
        p.readStaged(false);
        assertTrue(p.readsToCheck());
        p.lookAheadStarts();
        assertFalse(p.readsToCheck(), "each look-ahead starts afresh");
    }
}
