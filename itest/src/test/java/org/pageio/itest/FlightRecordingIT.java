package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import jdk.jfr.Configuration;
import jdk.jfr.EventType;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pageio.itest.kit.ExportedJar;
import org.pageio.itest.kit.ExportedJar.Run;

/**
 * The shipped JDK Flight Recorder settings, {@code app/pageio.jfc}, and {@code ./pageio --jfr FILE}:
 * the file is valid for this JDK and enables every pageio event; the container started with the
 * recording option {@code ./pageio} passes leaves a recording that holds pageio's events and the
 * JDK's default ones; the script refuses a file it could not write before anything starts.
 * Plain JUnit, no Pax Exam.
 */
public class FlightRecordingIT {

    /** Every JFR event pageio defines (a new one must be added here and to app/pageio.jfc). */
    private static final List<String> PAGEIO_EVENTS = List.of("org.pageio.IoBatch");

    private static ExportedJar jar;
    private static Path data;
    /** The copy the build puts beside the jar; the script passes the checkout's. */
    private static Path shippedJfc;

    @BeforeClass
    public static void findJar() throws Exception {
        jar = ExportedJar.require();
        data = Path.of(PageioTestBase.dataDirectory()).resolveSibling("pageio-jfr-data");
        Files.createDirectories(data);
        shippedJfc = jar.path().resolveSibling("pageio.jfc");
    }

    @Test
    public void theShippedSettingsAreValidAndEnableEveryPageioEvent() throws Exception {
        assertTrue("the build copies app/pageio.jfc beside the jar: " + shippedJfc, Files.isRegularFile(shippedJfc));
        Path checkout = Path.of(System.getProperty("pageio.script")).resolveSibling("app").resolve("pageio.jfc");
        assertEquals("the copy beside the jar is the checkout's", Files.readString(checkout), Files.readString(shippedJfc));
        Configuration c = Configuration.create(shippedJfc); // parses it as the JVM does; throws on a bad file
        assertEquals("pageio", c.getName());
        Map<String, String> s = c.getSettings();
        for (String event : PAGEIO_EVENTS) {
            assertEquals(event + " enabled in " + s, "true", s.get(event + "#enabled"));
        }
        assertEquals(s.toString(), "10 ms", s.get("org.pageio.IoBatch#threshold"));
        assertEquals(s.toString(), "true", s.get("org.pageio.IoBatch#stackTrace"));
    }

    /**
     * {@code ./pageio exec --jfr FILE 'pageio:load --rows 1000 t; pageio:scan count t'} as the jar
     * with the script's JVM options, and the settings' own option {@code io-threshold=0ms} so that
     * every read is recorded (the shipped 10 ms would make the count depend on the disk's speed).
     */
    @Test
    public void aRecordedRunLeavesAFileWithPageioAndJdkEvents() throws Exception {
        Path dir = Files.createTempDirectory(data, "run");
        Path file = dir.resolve("pageio.jfr");
        Run r = jar.exec(dir, "pageio:load --rows 1000 t; pageio:scan count t", List.of("-Xlog:jfr+startup=error",
                "-XX:StartFlightRecording=filename=" + file + ",settings=default,settings=" + shippedJfc
                        + ",dumponexit=true,io-threshold=0ms"));
        assertEquals("exit code; stderr: " + r.err(), 0, r.code());
        assertTrue(r.out(), r.out().contains("count t: count=1000"));
        assertFalse("the JVM's start lines stay out of the results: " + r.out(), r.out().contains("Started recording"));
        assertTrue("written at exit: " + file, Files.isRegularFile(file));

        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        List<RecordedEvent> reads = events.stream().filter(e -> e.getEventType().getName().equals("org.pageio.IoBatch")).toList();
        assertFalse("no org.pageio.IoBatch event in " + file, reads.isEmpty());
        long blocks = 0;
        for (RecordedEvent e : reads) {
            assertEquals(e.toString(), "OK", e.getString("status"));
            assertTrue("with a stack trace: " + e, e.getStackTrace() != null);
            blocks += e.getInt("blocks");
        }
        assertTrue("the scan's reads of t are recorded: " + blocks + " blocks", blocks >= 31); // 1000 rows: 31 blocks
        assertTrue("the JDK's default settings apply too", events.stream()
                .anyMatch(e -> e.getEventType().getName().equals("jdk.JVMInformation")));

        // Every pageio event type this run defined is listed enabled in the shipped settings.
        Map<String, String> settings = Configuration.create(shippedJfc).getSettings();
        try (RecordingFile f = new RecordingFile(file)) {
            for (EventType t : f.readEventTypes()) {
                if (t.getName().startsWith("org.pageio.")) {
                    assertEquals(t.getName() + " is not in app/pageio.jfc", "true", settings.get(t.getName() + "#enabled"));
                    assertTrue(t.getName() + " is missing from PAGEIO_EVENTS", PAGEIO_EVENTS.contains(t.getName()));
                }
            }
        }
    }

    /** {@code ./pageio exec --jfr DIR/missing/x.jfr}: one line, exit 2, before the build, the JVM or the data directory. */
    @Test
    public void theScriptRefusesAFileInAMissingDirectoryBeforeStarting() throws Exception {
        Path dir = Files.createTempDirectory(data, "refused");
        Path dataDir = dir.resolve("data");
        Path missing = dir.resolve("missing");
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process p = new ProcessBuilder("bash", System.getProperty("pageio.script"), "exec", "--data", dataDir.toString(),
                "--jfr", missing.resolve("x.jfr").toString(), "pageio:methods")
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertTrue("the script did not exit", p.waitFor(60, TimeUnit.SECONDS));
        String stderr = Files.readString(err);
        assertEquals("exit code; stderr: " + stderr, 2, p.exitValue());
        assertEquals(List.of("pageio: --jfr: cannot record into " + missing.resolve("x.jfr") + ": directory " + missing
                + " does not exist; create it (mkdir -p " + missing + ") or name a file in another"), stderr.lines().toList());
        assertEquals("", Files.readString(out));
        assertFalse("nothing was started: no data directory", Files.exists(dataDir));
        assertFalse(Files.exists(missing));
    }
}
