package org.pageio.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;

import javax.management.MBeanServerFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.web.PrometheusText.Type;

/** {@code /metrics}: the format's rules, the numbers over a real buffer manager on files, and who may read them. */
class PageioMetricsTest {

    @TempDir
    Path dir;

    @Test
    void theFormatEscapesLabelsAndHelpAndRefusesWhatPrometheusWould() {
        PrometheusText t = new PrometheusText();
        t.family("pageio_x_total", Type.COUNTER, "a \\ back\nslash").sample(3, "a", "q\"uote", "b", "back\\slash\nline");
        t.sample(0.25, "a", "other", "b", "");
        t.family("pageio_g", Type.GAUGE, "gauge").sample(Double.NaN);
        assertEquals("""
                # HELP pageio_x_total a \\\\ back\\nslash
                # TYPE pageio_x_total counter
                pageio_x_total{a="q\\"uote",b="back\\\\slash\\nline"} 3
                pageio_x_total{a="other",b=""} 0.25
                # HELP pageio_g gauge
                # TYPE pageio_g gauge
                pageio_g NaN
                """, t.toString());
        assertThrows(IllegalArgumentException.class, () -> t.family("pageio_x_total", Type.COUNTER, "again"));
        assertThrows(IllegalArgumentException.class, () -> t.family("pageio_reads", Type.COUNTER, "no _total"));
        assertThrows(IllegalArgumentException.class, () -> t.family("pageio_y_total", Type.GAUGE, "a gauge in _total"));
        assertThrows(IllegalArgumentException.class, () -> t.family("pageio-y", Type.GAUGE, "bad name"));
        t.family("pageio_z", Type.GAUGE, "z").sample(1, "k", "v");
        assertThrows(IllegalArgumentException.class, () -> t.sample(2, "k", "v"), "the same series twice");
        assertThrows(IllegalArgumentException.class, () -> t.sample(2, "__k", "v"), "reserved label name");
        assertEquals("1.0E300", PrometheusText.number(1e300));
        assertEquals("1796520096.324", PrometheusText.number(1.796520096324E9), "a timestamp in seconds, no exponent");
        assertEquals("+Inf", PrometheusText.number(Double.POSITIVE_INFINITY));
        assertEquals("-12", PrometheusText.number(-12));
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
                String row = "{backend_type=\"client\",object=\"relation\",context=\"normal\",io_method=\"sync\"}";
                assertTrue(lines.contains("pageio_up 1"), text);
                assertTrue(lines.contains("pageio_stat_io_reads_total" + row + " 8"), text);
                assertTrue(lines.contains("pageio_stat_io_read_bytes_total" + row + " 65536"), text);
                assertTrue(lines.contains("pageio_stat_io_hits_total" + row + " 9"), text);
                assertTrue(lines.contains("pageio_read_streams_total 1"), text);
                assertTrue(lines.contains("pageio_read_stream_buffers_total 8"), text);
                assertTrue(lines.contains("pageio_read_stream_ios_total 0"), text);
                assertTrue(lines.contains("pageio_read_stream_distance_sum_total 8"), "distance 1 at each hit\n" + text);
                assertTrue(lines.stream().anyMatch(l -> l.startsWith("pageio_stat_io_read_time_seconds_total" + row + " ")),
                        text);
                assertTrue(lines.stream().anyMatch(l -> l.startsWith("pageio_stat_io_stats_reset_timestamp_seconds" + row)),
                        text);
                for (String c : List.of("reads", "read_bytes", "read_time_seconds", "writes", "write_bytes",
                        "write_time_seconds", "extends", "extend_bytes", "hits", "evictions", "reuses", "fsyncs",
                        "fsync_time_seconds")) {
                    assertTrue(lines.contains("# TYPE pageio_stat_io_" + c + "_total counter"), c + " in\n" + text);
                }
                assertTrue(lines.contains("pageio_shared_buffers 64"), text);
                assertTrue(lines.contains("pageio_buffers_used 8"), text);
                assertTrue(lines.contains("pageio_buffers_unused 56"), text);
                assertTrue(lines.contains("pageio_buffers_pinned 1"), text);
                assertTrue(lines.contains("pageio_buffers_dirty 0"), text);
                assertTrue(lines.contains("pageio_checksum_failures_total 0"), text);
                assertTrue(lines.contains("pageio_aio_handles{state=\"SUBMITTED\"} 0"), text);
                assertTrue(lines.contains("pageio_io_method_info{io_method=\"sync\",wanted=\"sync\"} 1"), text);
                assertTrue(lines.contains("pageio_io_method_swaps_total 0"), text);
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
        assertEquals("pageio_up 0\n", PageioMetrics.scrape(null, MBeanServerFactory.newMBeanServer()).lines()
                .filter(l -> !l.startsWith("#")).findFirst().orElse("") + "\n");
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

    private static String basic(String pair) {
        return "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8));
    }
}
