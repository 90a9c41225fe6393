package org.pageio.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.sync.SyncIoMethod;

/**
 * {@code /metrics}: which families pageio exposes and with what labels and help, the numbers over a real
 * buffer manager on files and a worker pool's MXBean, and who may read them. The format itself (escaping,
 * refusals) is the Prometheus client library's.
 */
class PageioMetricsTest {

    @TempDir
    Path dir;

    @Test
    void theFamiliesTheirTypesAndHelpAsDocumentedInTheFormatsContentType() throws Exception {
        assertEquals("text/plain; version=0.0.4; charset=utf-8", PageioMetrics.CONTENT_TYPE);
        try (BufferManagerCore bufmgr = BufferManagerCore.open(dir,
                new BufMgrSettings.Builder().sharedBuffers(16).maxSessions(2).build(), new SyncIoMethod())) {
            String empty = PageioMetrics.scrape(bufmgr, MBeanServerFactory.newMBeanServer());
            assertFalse(empty.contains("pageio_stat_io_"), "no row counted yet: the library writes no empty family\n" + empty);
            try (BufferSession s = bufmgr.pool().openSession("client")) {
                s.releaseBuffer(s.readBuffer(WrittenRelation.create(bufmgr, s, 16384, 1), 0, null));
            }
            String text = PageioMetrics.scrape(bufmgr, MBeanServerFactory.newMBeanServer());
            Map<String, String> types = new TreeMap<>();
            Set<String> helped = new TreeSet<>();
            for (String l : text.lines().toList()) {
                String[] w = l.split(" ", 4);
                if (l.startsWith("# TYPE ")) {
                    assertNull(types.put(w[2], w[3]), "one TYPE line per family: " + w[2] + "\n" + text);
                } else if (l.startsWith("# HELP ")) {
                    assertFalse(w[3].isBlank(), l);
                    helped.add(w[2]);
                }
            }
            Map<String, String> expected = new TreeMap<>();
            for (String c : List.of("reads", "read_bytes", "read_time_seconds", "writes", "write_bytes",
                    "write_time_seconds", "extends", "extend_bytes", "hits", "evictions", "reuses", "fsyncs",
                    "fsync_time_seconds")) {
                expected.put("pageio_stat_io_" + c + "_total", "counter");
            }
            for (String g : List.of("pageio_up", "pageio_stat_io_stats_reset_timestamp_seconds", "pageio_aio_handles",
                    "pageio_aio_handle_slots", "pageio_shared_buffers", "pageio_buffers_used", "pageio_buffers_unused",
                    "pageio_buffers_dirty", "pageio_buffers_pinned", "pageio_buffers_usagecount_avg",
                    "pageio_io_method_info", "pageio_io_method_swap_pause_seconds")) {
                expected.put(g, "gauge");
            }
            for (String c : List.of("pageio_checksum_failures_total", "pageio_read_streams_total",
                    "pageio_read_stream_buffers_total", "pageio_read_stream_distance_sum_total", "pageio_read_stream_ios_total",
                    "pageio_read_stream_ios_in_progress_sum_total", "pageio_read_stream_waits_total",
                    "pageio_read_stream_wait_seconds_total", "pageio_io_method_swaps_total",
                    "pageio_io_method_swap_failures_total")) {
                expected.put(c, "counter");
            }
            assertEquals(expected, types, "the families of docs/metrics.md, counters named with their _total once");
            assertEquals(expected.keySet(), helped, "every family has its HELP");
            assertTrue(text.contains("# HELP pageio_stat_io_reads_total Read operations, each of one or more blocks combined"
                    + " (pg_stat_io.reads)\n"), text);
        }
    }

    @Test
    void theWorkerPoolsFamiliesWhileItsMXBeanIsRegistered() throws Exception {
        MBeanServer server = MBeanServerFactory.newMBeanServer();
        server.registerMBean(new FakeWorkerPool(), new ObjectName(PageioMetrics.WORKER_POOL));
        Map<String, Double> v = samples(PageioMetrics.scrape(null, server));
        assertEquals(0, v.get("pageio_up"));
        assertEquals(3, v.get("pageio_io_workers"));
        assertEquals(1, v.get("pageio_io_workers_idle"));
        assertEquals(2, v.get("pageio_io_workers_min"));
        assertEquals(8, v.get("pageio_io_workers_max"));
        assertEquals(5, v.get("pageio_io_worker_queue_depth"));
        assertEquals(63, v.get("pageio_io_worker_queue_capacity"));
        assertEquals(4, v.get("pageio_io_worker_launches_total"));
        assertEquals(1, v.get("pageio_io_worker_retirements_total"));
        assertEquals(0, v.get("pageio_io_worker_deaths_total"));
        assertEquals(1000, v.get("pageio_io_worker_ios_total"));
        assertEquals(7, v.get(series("pageio_io_worker_issuer_ios_total", "reason", "queue_full")));
        assertEquals(9, v.get(series("pageio_io_worker_issuer_ios_total", "reason", "lock_busy")));
        assertEquals(11, v.get(series("pageio_io_worker_issuer_ios_total", "reason", "taken_back")));
        assertEquals(14, v.size(), v::toString);
    }

    /** The attributes of worker-bundle's WorkerPoolMXBean that /metrics reads. */
    public interface FakeWorkerPoolMXBean {
        int getWorkers();
        int getIdleWorkers();
        int getMinWorkers();
        int getMaxWorkers();
        int getQueueDepth();
        int getQueueCapacity();
        long getLaunches();
        long getRetirements();
        long getDeaths();
        long getWorkerIos();
        long getInlineQueueFull();
        long getInlineContended();
        long getTakenBack();
    }

    public static final class FakeWorkerPool implements FakeWorkerPoolMXBean {
        public int getWorkers() { return 3; }
        public int getIdleWorkers() { return 1; }
        public int getMinWorkers() { return 2; }
        public int getMaxWorkers() { return 8; }
        public int getQueueDepth() { return 5; }
        public int getQueueCapacity() { return 63; }
        public long getLaunches() { return 4; }
        public long getRetirements() { return 1; }
        public long getDeaths() { return 0; }
        public long getWorkerIos() { return 1000; }
        public long getInlineQueueFull() { return 7; }
        public long getInlineContended() { return 9; }
        public long getTakenBack() { return 11; }
    }

    @Test
    void aScrapeHasEveryStatIoCounterTheBufferPoolAndTheHandles() throws Exception {
        try (BufferManagerCore bufmgr = BufferManagerCore.open(dir,
                new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(4).build(), new SyncIoMethod())) {
            try (BufferSession s = bufmgr.pool().openSession("client")) {
                SmgrRelation rel = WrittenRelation.create(bufmgr, s, 16384, 8);
                for (int b = 0; b < 8; b++) {
                    s.releaseBuffer(s.readBuffer(rel, b, null));
                }
                try (ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, 8), 0, null)) {
                    for (int b = 0; b < 8; b++) {
                        s.releaseBuffer(stream.next()); // all hits: no read started
                    }
                }
                int held = s.readBuffer(rel, 0, null); // a hit, pinned while scraped
                String text = PageioMetrics.scrape(bufmgr, MBeanServerFactory.newMBeanServer());
                s.releaseBuffer(held);
                List<String> lines = text.lines().toList();
                Map<String, Double> v = samples(text);
                String[] row = {"backend_type", "client", "object", "relation", "context", "normal", "io_method", "sync"};
                assertEquals(1, v.get("pageio_up"), text);
                assertEquals(8, v.get(series("pageio_stat_io_reads_total", row)), text);
                assertEquals(65536, v.get(series("pageio_stat_io_read_bytes_total", row)), text);
                assertEquals(9, v.get(series("pageio_stat_io_hits_total", row)), text);
                assertEquals(1, v.get("pageio_read_streams_total"), text);
                assertEquals(8, v.get("pageio_read_stream_buffers_total"), text);
                assertEquals(0, v.get("pageio_read_stream_ios_total"), text);
                assertEquals(8, v.get("pageio_read_stream_distance_sum_total"), "distance 1 at each hit\n" + text);
                assertTrue(v.containsKey(series("pageio_stat_io_read_time_seconds_total", row)), text);
                assertTrue(v.get(series("pageio_stat_io_stats_reset_timestamp_seconds", row)) > 1.7e9, text);
                for (String c : List.of("reads", "read_bytes", "read_time_seconds", "writes", "write_bytes",
                        "write_time_seconds", "extends", "extend_bytes", "hits", "evictions", "reuses", "fsyncs",
                        "fsync_time_seconds")) {
                    assertTrue(lines.contains("# TYPE pageio_stat_io_" + c + "_total counter"), c + " in\n" + text);
                }
                assertEquals(64, v.get("pageio_shared_buffers"), text);
                assertEquals(8, v.get("pageio_buffers_used"), text);
                assertEquals(56, v.get("pageio_buffers_unused"), text);
                assertEquals(1, v.get("pageio_buffers_pinned"), text);
                assertEquals(0, v.get("pageio_buffers_dirty"), text);
                assertEquals(0, v.get("pageio_checksum_failures_total"), text);
                assertEquals(0, v.get(series("pageio_aio_handles", "state", "SUBMITTED")), text);
                assertEquals(1, v.get(series("pageio_io_method_info", "io_method", "sync", "wanted", "sync")), text);
                assertEquals(0, v.get("pageio_io_method_swaps_total"), text);
                assertFalse(text.contains("pageio_io_workers"), "no worker pool registered: no worker metrics\n" + text);
                // one family's samples together: a name never comes back after another family began
                List<String> names = lines.stream().filter(l -> !l.startsWith("#")).map(l -> l.split("[{ ]", 2)[0]).toList();
                int runs = 0;
                for (int i = 0; i < names.size(); i++) {
                    runs += i == 0 || !names.get(i).equals(names.get(i - 1)) ? 1 : 0;
                }
                assertEquals(names.stream().distinct().count(), runs, text);
            }
        }
        assertEquals(Map.of("pageio_up", 0.0), samples(PageioMetrics.scrape(null, MBeanServerFactory.newMBeanServer())),
                "not running: pageio_up 0 alone");
    }

    @Test
    void onlyTheWebConsolesUserAndPasswordMayRead() {
        Dictionary<String, Object> console = new Hashtable<>();
        console.put("username", "admin");
        console.put("password", WebConsolePassword.hash("s3cretPassw0rd", new SecureRandom()));
        assertTrue(MetricsServlet.allowed(basic("admin:s3cretPassw0rd"), console));
        assertTrue(MetricsServlet.allowed("basic " + Base64.getEncoder().encodeToString(
                "admin:s3cretPassw0rd".getBytes(StandardCharsets.UTF_8)), console), "the scheme in any case");
        assertFalse(MetricsServlet.allowed(basic("admin:wrong"), console));
        assertFalse(MetricsServlet.allowed(basic("root:s3cretPassw0rd"), console));
        assertFalse(MetricsServlet.allowed(null, console));
        assertFalse(MetricsServlet.allowed("Bearer x", console));
        assertFalse(MetricsServlet.allowed("Basic !!!", console));
        assertFalse(MetricsServlet.allowed(basic("admin:s3cretPassw0rd"), null), "no console configuration: locked");
        Dictionary<String, Object> plain = new Hashtable<>();
        plain.put("password", "admin");
        assertFalse(MetricsServlet.allowed(basic("admin:admin"), plain), "never admin/admin");
        Dictionary<String, Object> unusable = new Hashtable<>();
        unusable.put("password", WebConsolePassword.UNUSABLE);
        assertFalse(MetricsServlet.allowed(basic("admin:unusable"), unusable));
    }

    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** The samples of an exposition: series (name, then labels sorted by name) to value. */
    static Map<String, Double> samples(String text) {
        Map<String, Double> out = new TreeMap<>();
        for (String l : text.lines().toList()) {
            if (l.startsWith("#") || l.isBlank()) {
                continue;
            }
            int sp = l.lastIndexOf(' ');
            String key = l.substring(0, sp);
            int brace = key.indexOf('{');
            if (brace >= 0) {
                List<String> pairs = new ArrayList<>();
                Matcher m = LABEL.matcher(key.substring(brace));
                while (m.find()) {
                    pairs.add(m.group(1));
                    pairs.add(m.group(2));
                }
                key = series(key.substring(0, brace), pairs.toArray(String[]::new));
            }
            assertNull(out.put(key, Double.parseDouble(l.substring(sp + 1))), "one sample per series: " + key);
        }
        return out;
    }

    /** A series as {@link #samples} names it: labels as name, value, …; sorted by name. */
    static String series(String name, String... labels) {
        Map<String, String> sorted = new TreeMap<>();
        for (int i = 0; i < labels.length; i += 2) {
            sorted.put(labels[i], labels[i + 1]);
        }
        StringBuilder sb = new StringBuilder(name);
        String sep = "{";
        for (Map.Entry<String, String> e : sorted.entrySet()) {
            sb.append(sep).append(e.getKey()).append("=\"").append(e.getValue()).append('"');
            sep = ",";
        }
        return sorted.isEmpty() ? name : sb.append('}').toString();
    }

    private static String basic(String pair) {
        return "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8));
    }
}
