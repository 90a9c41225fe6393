package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import javax.inject.Inject;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.Test;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.itest.kit.NumberedRelation;

/**
 * stat_io as the MXBean {@code org.pageio:type=StatIo} (read through the platform MBeanServer, as
 * JConsole does; gone while the buffer manager is stopped) with its rows keyed by I/O method, their
 * stats_reset and the reset of one object and context, and the JFR event
 * {@code org.pageio.IoBatch}: off by default, switched on by an in-process recording, one event
 * per completed read with method, operation, bytes and latency.
 */
public class StatIoJmxJfrIT extends PageioTestBase {

    static final String NAME = "org.pageio:type=StatIo";
    /** A timestamptz as PostgreSQL prints it. */
    static final String TIMESTAMPTZ = "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d(\\.\\d{1,6})?[+-]\\d\\d(:\\d\\d){0,2}";

    @Inject
    private BundleContext context;

    /** Injected so that the tests start once a buffer manager is registered; they use {@link #current()}. */
    @Inject
    private BufferManager bufmgr;

    @Test
    public void statIoIsAnMXBeanWhileTheBufferManagerRuns() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName(NAME);
        assertTrue(NAME + " is registered", server.isRegistered(name));
        server.invoke(name, "reset", null, null);
        assertEquals(0L, server.getAttribute(name, "Reads"));

        // The buffer manager now in the registry, whose MXBean this is (the injected one may be an
        // instance SCR has since replaced, e.g. after a configuration arrived at start-up).
        BufferManager live = current();
        long relNumber = 500000 + ThreadLocalRandom.current().nextInt(100000);
        SmgrRelation rel = NumberedRelation.create(live, relNumber, 32);
        try {
            NumberedRelation.streamAndCheck(live, rel, 32);
        } finally {
            rel.unlink();
        }
        long reads = (Long) server.getAttribute(name, "Reads");
        long bytes = (Long) server.getAttribute(name, "ReadBytes");
        assertTrue("reads " + reads, reads >= 1);
        assertEquals("every block read once", 32L * 8192, bytes);
        assertEquals((double) bytes / reads, (Double) server.getAttribute(name, "BytesPerRead"), 0.001);
        assertEquals(live.methodStatus().method(), server.getAttribute(name, "IoMethod"));
        CompositeData[] rows = (CompositeData[]) server.getAttribute(name, "Rows");
        CompositeData client = null;
        for (CompositeData r : rows) {
            if ("client".equals(r.get("backendType")) && "relation".equals(r.get("object")) && "normal".equals(r.get("context"))) {
                client = r;
            }
        }
        assertTrue("a client/relation/normal row in " + List.of(rows), client != null);
        assertEquals(reads, client.get("reads"));
        assertEquals(bytes, client.get("readBytes"));
        // keyed by the method that did the reads; stats_reset as PostgreSQL prints a timestamptz, here the reset above
        assertEquals(live.methodStatus().method(), client.get("ioMethod"));
        String statsReset = (String) client.get("statsReset");
        assertTrue(statsReset, statsReset.matches(TIMESTAMPTZ));
        long resetMillis = (Long) server.getAttribute(name, "StatsReset");
        assertEquals(statsReset, java.time.Instant.ofEpochMilli(resetMillis).atZone(java.time.ZoneId.systemDefault())
                .toLocalDateTime().toString().replace('T', ' ').substring(0, 19), statsReset.substring(0, 19));

        // pageio's reset of one object and context: relation/bulkread leaves the normal rows, one of normal clears them
        server.invoke(name, "reset", new Object[] {"relation", "bulkread"}, new String[] {"java.lang.String", "java.lang.String"});
        assertEquals("another context's rows stay", reads, server.getAttribute(name, "Reads"));
        server.invoke(name, "reset", new Object[] {"", "normal"}, new String[] {"java.lang.String", "java.lang.String"});
        for (CompositeData r : (CompositeData[]) server.getAttribute(name, "Rows")) {
            assertFalse("normal rows are reset: " + r, "normal".equals(r.get("context")));
        }
        assertTrue("StatsReset moved: " + resetMillis, (Long) server.getAttribute(name, "StatsReset") >= resetMillis);
        try {
            server.invoke(name, "reset", new Object[] {"relation", "bulk"}, new String[] {"java.lang.String", "java.lang.String"});
            throw new AssertionError("an unknown context was taken");
        } catch (javax.management.RuntimeMBeanException e) {
            assertEquals("unknown stat_io context 'bulk': use 'normal', 'bulkread', 'bulkwrite', 'vacuum'",
                    e.getCause().getMessage());
        }

        Bundle b = FrameworkUtilBundle.of(context, "org.pageio.bufmgr");
        b.stop();
        try {
            assertFalse("unregistered while the buffer manager is stopped", server.isRegistered(name));
        } finally {
            b.start();
        }
        long until = System.currentTimeMillis() + 20_000;
        while (!server.isRegistered(name)) {
            assertTrue("registered again when it restarts", System.currentTimeMillis() < until);
            Thread.sleep(10);
        }
    }

    @Test
    public void aRecordingSwitchesTheIoBatchEventOnAndFindsOnePerRead() throws Exception {
        BufferManager b = current();
        long relNumber = 600000 + ThreadLocalRandom.current().nextInt(100000);
        SmgrRelation rel = NumberedRelation.create(b, relNumber, 48);
        Path file = Files.createTempFile("pageio-io-", ".jfr");
        try {
            NumberedRelation.streamAndCheck(b, rel, 16); // blocks 0..15 read with the event off
            try (Recording r = new Recording()) {
                r.enable("org.pageio.IoBatch");
                r.start();
                // blocks 16..47 are not cached yet: each combined read is one event
                NumberedRelation.streamAndCheck(b, rel, 48);
                r.stop();
                r.dump(file);
            }
            List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                    .filter(e -> e.getEventType().getName().equals("org.pageio.IoBatch"))
                    .filter(e -> e.getString("relation").contains(String.valueOf(relNumber)))
                    .toList();
            assertFalse("no org.pageio.IoBatch event recorded", events.isEmpty());
            long bytes = 0;
            int blocks = 0;
            for (RecordedEvent e : events) {
                assertEquals(b.methodStatus().method(), e.getString("method"));
                assertEquals("readv", e.getString("operation"));
                assertEquals("OK", e.getString("status"));
                assertTrue(e.toString(), e.getLong("latency") > 0);
                assertTrue("the event's duration is the read's, staging to completion: " + e, e.getDuration().toNanos() > 0);
                assertEquals(e.getInt("blocks") * 8192L, e.getLong("bytes"));
                bytes += e.getLong("bytes");
                blocks += e.getInt("blocks");
            }
            assertEquals("one event per read, covering exactly the blocks not cached before", 32, blocks);
            assertEquals(32L * 8192, bytes);
            System.out.println("StatIoJmxJfrIT: " + events.size() + " IoBatch events, first: " + events.get(0));
        } finally {
            rel.unlink();
            Files.deleteIfExists(file);
        }
    }

    private BufferManager current() {
        ServiceReference<BufferManager> ref = context.getServiceReference(BufferManager.class);
        return context.getService(ref);
    }

    /** Finds a bundle by symbolic name. */
    static final class FrameworkUtilBundle {
        static Bundle of(BundleContext context, String bsn) {
            for (Bundle b : context.getBundles()) {
                if (b.getSymbolicName().equals(bsn)) {
                    return b;
                }
            }
            throw new AssertionError("no bundle " + bsn);
        }
    }
}
