package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import jdk.jfr.Configuration;
import org.junit.BeforeClass;
import org.junit.Test;
import org.pageio.itest.kit.ExportedJar;

/**
 * The shipped JDK Flight Recorder settings, {@code app/pageio.jfc}: the file is valid for this JDK
 * and enables every pageio event. Plain JUnit, no Pax Exam.
 */
public class FlightRecordingIT {

    /** Every JFR event pageio defines (a new one must be added here and to app/pageio.jfc). */
    private static final List<String> PAGEIO_EVENTS = List.of("org.pageio.IoBatch");

    private static ExportedJar jar;
    /** The copy the build puts beside the jar. */
    private static Path shippedJfc;

    @BeforeClass
    public static void findJar() {
        jar = ExportedJar.require();
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
}
