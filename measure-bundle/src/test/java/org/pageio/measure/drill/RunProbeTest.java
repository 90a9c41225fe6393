package org.pageio.measure.drill;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.SynchronousQueue;
import org.junit.jupiter.api.Test;

/**
 * {@link RunProbe}'s context switches are the process's, every thread's: a hand-off between two
 * threads that each block in turn adds at least one per hand-off.
 */
class RunProbeTest {

    @Test
    void handOffsBetweenThreadsCountAsContextSwitches() throws Exception {
        long before = RunProbe.contextSwitches();
        assertTrue(before >= 0, "getrusage answers on Linux: " + before);
        int handOffs = 200;
        SynchronousQueue<Integer> there = new SynchronousQueue<>();
        SynchronousQueue<Integer> back = new SynchronousQueue<>();
        Thread peer = new Thread(() -> {
            try {
                for (int i = 0; i < handOffs; i++) {
                    back.put(there.take());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "hand-off peer");
        peer.start();
        for (int i = 0; i < handOffs; i++) {
            there.put(i);
            back.take();
        }
        peer.join();
        long switches = RunProbe.contextSwitches() - before;
        // each round trip blocks one thread or the other at least once (the peer's exit is counted too)
        assertTrue(switches >= handOffs, handOffs + " round trips, " + switches + " context switches");
    }
}
