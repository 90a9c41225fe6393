package org.pageio.measure.drill;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link RunProbe}'s context switches are the process's: a thread that blocks gives up its CPU,
 * which the kernel counts as a voluntary context switch, so N sleeps add at least N.
 */
class RunProbeTest {

    @Test
    void aThreadThatBlocksCountsAContextSwitchEachTime() throws Exception {
        long before = RunProbe.contextSwitches();
        assertTrue(before >= 0, "getrusage answers on Linux: " + before);
        int sleeps = 50;
        for (int i = 0; i < sleeps; i++) {
            Thread.sleep(1); // blocks in the kernel: one voluntary switch at least
        }
        long switches = RunProbe.contextSwitches() - before;
        assertTrue(switches >= sleeps, sleeps + " sleeps, " + switches + " context switches");
    }
}
