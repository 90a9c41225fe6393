package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.method.sync.SyncIoMethod;

/**
 * The JFR event {@value IoBatchEvent#NAME} on real reads: one per combined read, with a duration
 * from staging to completion, so that a recording's threshold selects by it.
 */
class IoBatchEventTest extends PoolTestBase {

    @Test
    void eachReadIsOneEventWhoseDurationRunsFromStagingToCompletion() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(73000, 48);
        List<RecordedEvent> events = record(Duration.ZERO, () -> scan(rel, 73000, 0, 48));
        assertFalse(events.isEmpty(), "no " + IoBatchEvent.NAME + " event recorded");
        int blocks = 0;
        for (RecordedEvent e : events) {
            assertTrue(e.getDuration().toNanos() > 0, "an event that begun at staging has a duration: " + e);
            assertTrue(e.getLong("latency") > 0, e.toString());
            assertEquals("OK", e.getString("status"));
            blocks += e.getInt("blocks");
        }
        assertEquals(48, blocks, "one event per read, covering every block read");
    }

    /**
     * Reads before any recording (JFR not initialized in a JVM that never recorded, so the event
     * type is not made yet), then a recording: its reads are events. The type registers while the
     * recording runs and must take its settings.
     */
    @Test
    void aRecordingStartedAfterReadsWithoutOneSeesTheReadsThatFollow() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(73002, 48);
        scan(rel, 73002, 0, 24);
        List<RecordedEvent> events = record(Duration.ZERO, () -> scan(rel, 73002, 24, 24));
        int blocks = events.stream().mapToInt(e -> e.getInt("blocks")).sum();
        assertEquals(24, blocks, "one event per read of the recorded scan: " + events);
    }

    /** A threshold no read reaches keeps every event out: thresholds apply to the read's duration. */
    @Test
    void aThresholdAboveEveryReadRecordsNone() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(73001, 48);
        List<RecordedEvent> events = record(Duration.ofHours(1), () -> scan(rel, 73001, 0, 48));
        assertEquals(List.of(), events);
        assertEquals(48, totalReadBlocks(), "the reads did happen");
    }

    private List<RecordedEvent> record(Duration threshold, Runnable work) throws Exception {
        Path file = dir.resolve("io.jfr");
        try (Recording r = new Recording()) {
            r.enable(IoBatchEvent.NAME).withThreshold(threshold);
            r.start();
            work.run();
            r.stop();
            r.dump(file);
        }
        return RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals(IoBatchEvent.NAME))
                .toList();
    }
}
