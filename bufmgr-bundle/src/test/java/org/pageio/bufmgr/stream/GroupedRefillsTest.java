package org.pageio.bufmgr.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link GroupedRefills}: when it applies, when a stream is deep enough to skip a look-ahead, the wait share. */
class GroupedRefillsTest {

    @Test
    void appliesToBatchingStreamsDeepEnoughOnly() {
        assertNull(GroupedRefills.forStream(false, true, 64, false), "not batching: PostgreSQL's look-ahead");
        assertNull(GroupedRefills.forStream(true, true, 7, false), "sequential under 8 reads");
        assertNotNull(GroupedRefills.forStream(true, true, 8, false));
        assertTrue(GroupedRefills.forStream(true, true, 8, true).sequential(), "sequential streams group with sync too");
        assertNull(GroupedRefills.forStream(true, false, 11, false), "random under 12 reads");
        assertNull(GroupedRefills.forStream(true, false, 64, true), "random with reads deferred to the wait (sync)");
        assertFalse(GroupedRefills.forStream(true, false, 12, false).sequential());
    }

    @Test
    void aGroupIsAnEighthOfMaxIosAndAtLeastThreeFromTwelveOn() {
        assertEquals(1, GroupedRefills.readGroup(8));
        assertEquals(3, GroupedRefills.readGroup(12));
        assertEquals(3, GroupedRefills.readGroup(16));
        assertEquals(8, GroupedRefills.readGroup(64));
    }

    @Test
    void aSequentialStreamSkipsLookAheadsUntilAGroupOfReadsIsFree() {
        GroupedRefills g = new GroupedRefills(true, 16); // group of 3
        int distance = 256;
        assertFalse(g.deep(0, distance, 0, 0, 0), "no read in flight: always look ahead");
        assertTrue(g.deep(16, distance, 200, 0, 0), "max_ios in flight");
        assertTrue(g.deep(14, distance, 200, 0, 0), "two reads free: fewer than a group");
        assertFalse(g.deep(13, distance, 200, 0, 0), "three reads free: a group");
    }

    @Test
    void aSequentialStreamAlsoWaitsForAnEighthOfItsDistanceInPins() {
        GroupedRefills g = new GroupedRefills(true, 16);
        assertTrue(g.deep(4, 256, 230, 0, 0), "26 pins free, fewer than 256 / 8");
        assertFalse(g.deep(4, 256, 224, 0, 0), "32 pins free");
        assertTrue(g.deep(4, 256, 220, 2, 3), "forwarded and pending pins count as taken");
    }

    @Test
    void aRandomStreamGroupsOnlyWhileItRunsAhead() {
        GroupedRefills g = new GroupedRefills(false, 16);
        assertFalse(g.runningAhead(), "starts as a stream that waits");
        assertFalse(g.deep(16, 1, 16, 0, 0), "waiting: refills at every buffer, as PostgreSQL's");
        long t = 1_000_000_000L;
        for (int i = 0; i < 200; i++) {
            t += 100_000;
            g.readConsumed(false, 0, t); // never waits
        }
        assertTrue(g.runningAhead(), "wait share " + g.waitShare());
        assertTrue(g.deep(16, 1, 16, 0, 0), "max_ios in flight, running ahead: skip");
        assertTrue(g.deep(14, 1, 1, 0, 0), "two reads free: skip (pins are not a random stream's limit)");
        assertFalse(g.deep(13, 1, 16, 0, 0), "a group free: look ahead");
    }

    @Test
    void waitingMostOfTheTimeEndsTheGrouping() {
        GroupedRefills g = new GroupedRefills(false, 16);
        long t = 1_000_000_000L;
        for (int i = 0; i < 200; i++) {
            t += 100_000;
            g.readConsumed(false, 0, t);
        }
        assertTrue(g.runningAhead());
        // each read now waits for most of the time since the one before (readConsumed takes the
        // time itself after a wait: a wait as long as anything measured counts as the whole interval)
        for (int i = 0; i < 100; i++) {
            g.readConsumed(true, Long.MAX_VALUE / GroupedRefills.WAIT_SHARE_ONE, System.nanoTime() - 1_000);
        }
        assertFalse(g.runningAhead(), "wait share " + g.waitShare());
        assertFalse(g.deep(16, 1, 16, 0, 0));
    }

    @Test
    void aSequentialStreamKeepsNoWaitShare() {
        GroupedRefills g = new GroupedRefills(true, 16);
        for (int i = 0; i < 100; i++) {
            g.readConsumed(false, 0, i * 1000L);
        }
        assertEquals(GroupedRefills.WAIT_SHARE_ONE, g.waitShare());
    }
}
