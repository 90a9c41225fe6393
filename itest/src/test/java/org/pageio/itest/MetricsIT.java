package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.OutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.BeforeClass;
import org.junit.Test;
import org.pageio.itest.kit.ConsoleShell;
import org.pageio.itest.kit.ExportedJar;

/**
 * {@code /metrics} on the exported container {@code app/target/pageio.jar} with HTTP on a free
 * port: 401 without the Web Console's credentials or with a wrong password, and with them the
 * Prometheus text format that Prometheus' own {@code promtool check metrics} accepts, whose
 * stat_io reads grow with a scan, with the buffer pool, the handles and the worker pool in it.
 * Plain JUnit, no Pax Exam. Fails (never skips) when promtool or the jar is missing.
 */
public class MetricsIT {

    /** Debian's {@code prometheus} package installs it here. */
    static final String PROMTOOL = "/usr/bin/promtool";

    private static ExportedJar jar;
    private static Path target;

    @BeforeClass
    public static void findJarAndPromtool() {
        jar = ExportedJar.require();
        if (!new File(PROMTOOL).canExecute()) {
            fail("the metrics test checks the format with Prometheus' promtool (" + PROMTOOL + "): apt-get install -y"
                    + " prometheus (.ci/run installs it)");
        }
        target = Path.of(PageioTestBase.dataDirectory()).getParent();
    }

    @Test
    public void metricsForTheConsolesCredentialsInPrometheusFormat() throws Exception {
        Path data = ConsoleShell.freshData(target, "pageio-metrics-data");
        ConsoleShell shell = ConsoleShell.start(jar, data);
        try {
            String password = shell.awaitConsole("/system/console/pageio");
            String url = shell.origin() + "/metrics";

            HttpResponse<String> anonymous = ConsoleShell.http(url, null, null, null, null);
            assertEquals(anonymous.body(), 401, anonymous.statusCode());
            assertTrue(String.valueOf(anonymous.headers().map()), anonymous.headers()
                    .firstValue("WWW-Authenticate").orElse("").startsWith("Basic realm="));
            HttpResponse<String> wrong = ConsoleShell.http(url, password + "x", null, null, null);
            assertEquals(wrong.body(), 401, wrong.statusCode());

            shell.command("pageio:load --rows 20000 t", "loaded 20,000 rows into t");
            String before = scrape(url, password);
            shell.command("pageio:scan count t", "count t: count=20000");
            String after = scrape(url, password);

            long readsBefore = sum(before, "pageio_stat_io_reads_total", "io_method=\"worker\"");
            long readsAfter = sum(after, "pageio_stat_io_reads_total", "io_method=\"worker\"");
            assertTrue("reads counted by the scan: " + readsBefore + " then " + readsAfter + "\n" + after,
                    readsAfter > readsBefore);
            assertTrue(after, sum(after, "pageio_stat_io_read_bytes_total", "io_method=\"worker\"")
                    >= (readsAfter - readsBefore) * 8192);
            assertEquals(after, 1, value(after, "pageio_up"), 0);
            assertTrue("the scan's stream ended and added its reads\n" + after,
                    sum(after, "pageio_read_stream_ios_total", "") > sum(before, "pageio_read_stream_ios_total", "")
                    && sum(after, "pageio_read_stream_distance_sum_total", "") > 0);
            assertEquals(after, 1, value(after, "pageio_io_method_info{io_method=\"worker\",wanted=\"worker\"}"), 0);
            assertTrue(after, sum(after, "pageio_buffers_used", "") > 0);
            assertTrue(after, after.contains("\npageio_aio_handles{state=\"SUBMITTED\"} "));
            assertEquals(after, 0, value(after, "pageio_checksum_failures_total"), 0);
            // the start may bind the fallback first and swap to worker when it registers: any count
            assertTrue(after, value(after, "pageio_io_method_swaps_total") >= 0);
            // the worker method's pool, read from its MXBean
            assertTrue(after, sum(after, "pageio_io_workers", "") >= 1);
            assertEquals(after, 63, value(after, "pageio_io_worker_queue_capacity"), 0);
            assertTrue(after, sum(after, "pageio_io_worker_ios_total", "") > 0);

            String check = promtool(after);
            System.out.println("---- /metrics after a scan (promtool: " + check + ")\n" + after);
        } catch (RuntimeException | AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n---- container log:\n" + shell.log(), e);
        } finally {
            shell.close();
        }
    }

    /** GET /metrics with the credentials: 200, the format's content type; the body. */
    private static String scrape(String url, String password) throws Exception {
        HttpResponse<String> r = ConsoleShell.http(url, password, null, null, null);
        assertEquals(r.body(), 200, r.statusCode());
        assertEquals("text/plain;version=0.0.4;charset=utf-8", r.headers().firstValue("Content-Type").orElse("")
                .toLowerCase(Locale.ROOT).replace(" ", ""));
        return r.body();
    }

    /**
     * The value of the sample written as {@code series} (the name and the labels as the line has them: the
     * exposition library sorts labels by name and writes every value as a double, {@code 1.0}); fails without one.
     */
    static double value(String body, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(body);
        assertTrue("no sample " + series + " in\n" + body, m.find());
        return Double.parseDouble(m.group(1));
    }

    /** The sum of family {@code name}'s samples whose labels contain {@code label} ("" for any). */
    static long sum(String body, String name, String label) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? (\\S+)$").matcher(body);
        double sum = 0;
        while (m.find()) {
            if (label.isEmpty() || (m.group(1) != null && m.group(1).contains(label))) {
                sum += Double.parseDouble(m.group(2));
            }
        }
        return Math.round(sum);
    }

    /** Pipes {@code body} through {@code promtool check metrics}; fails unless it exits 0. Returns what it said. */
    private static String promtool(String body) throws Exception {
        Process p = new ProcessBuilder(PROMTOOL, "check", "metrics").redirectErrorStream(true).start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(body.getBytes(StandardCharsets.UTF_8));
        }
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("promtool check metrics did not end within 60 s");
        }
        assertEquals("promtool check metrics: " + said, 0, p.exitValue());
        return said.isEmpty() ? "no problems" : said;
    }
}
