package org.pageio.measure.fio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner against the real fio on a small file: every kind of job runs and its figures come out
 * of fio's JSON; a failing or missing fio is one line with the command and fio's own words. fio must
 * be installed: without it these tests fail.
 */
class FioTest {

    static final int MIB = 1 << 20;

    @TempDir
    Path tmp;

    Fio fio;
    Path file;

    @BeforeEach
    void fioAndAFile() throws IOException {
        fio = Fio.find().map(Fio::new).orElse(null);
        assertTrue(fio != null, "fio must be installed on this machine: apt-get install fio");
        file = tmp.resolve("data");
        byte[] b = new byte[MIB];
        new Random(1).nextBytes(b);
        Files.write(file, b);
    }

    @Test
    void sequentialReadsBufferedAndDirectReadTheWholeFile() throws IOException {
        for (boolean direct : new boolean[] {false, true}) {
            FioResult r = fio.run(FioJob.sequentialRead(List.of(file), 128 * 1024, 4, direct));
            assertEquals(MIB, r.ioBytes(), "direct=" + direct);
            assertEquals(8, r.ios());
            assertTrue(r.runtimeNanos() >= 0 && r.runtimeNanos() % 1_000_000 == 0, "fio's runtime is in ms: " + r);
            assertTrue(r.cpuNanos() >= 0, "usr_cpu + sys_cpu of job_runtime: " + r);
            assertTrue(r.bwBytes() >= 0 && r.iops() >= 0, r.toString());
        }
    }

    @Test
    void jobsOverDisjointRegionsReadTheFileOnceAsAGroup() throws IOException {
        FioResult r = fio.run(FioJob.sequentialRead(List.of(file), 128 * 1024, 2, false).withSize(MIB / 4).withJobs(4));
        assertEquals(MIB, r.ioBytes(), "four regions of a quarter: the whole file, once");
        assertEquals(8, r.ios());
    }

    @Test
    void randomReadsAtDepthStopAtTheirIoSize() throws IOException {
        FioResult r = fio.run(FioJob.randomRead(List.of(file), 8192, 8, true).withIoSize(256 * 1024));
        assertEquals(256 * 1024, r.ioBytes());
        assertEquals(32, r.ios());
    }

    @Test
    void everyEngineRuns() throws IOException {
        for (FioJob.Engine e : FioJob.Engine.values()) {
            FioResult r = fio.run(FioJob.randomRead(List.of(file), 8192, 2, true).withIoSize(64 * 1024).withEngine(e));
            assertEquals(8, r.ios(), e.fioName());
        }
    }

    @Test
    void aReplayReadsTheGivenBlocksInOrder() throws IOException {
        Path other = tmp.resolve("data.1");
        Files.copy(file, other);
        Path log = tmp.resolve("scan.iolog");
        FioJob.writeIolog(log, List.of(file, other), 128, 8192, new long[] {200, 5, 0, 131, 64});
        FioResult r = fio.run(FioJob.replay(log, 8192, 2, true));
        assertEquals(5, r.ios());
        assertEquals(5 * 8192, r.ioBytes(), "a replay counts every read it made as one block");
    }

    @Test
    void aSequentialWriteIsReadFromTheWriteSection() throws IOException {
        Path w = tmp.resolve("written");
        FioResult r = fio.run(FioJob.sequentialWrite(w, MIB, 128 * 1024, 4, false));
        assertEquals(MIB, r.ioBytes());
        assertEquals(8, r.ios());
        assertEquals(MIB, Files.size(w));
    }

    @Test
    void aFailingFioIsOneLineWithItsStderrAndTheCommand() {
        Path missing = tmp.resolve("missing");
        FioJob job = FioJob.sequentialRead(List.of(missing), 128 * 1024, 1, false);
        FioException e = assertThrows(FioException.class, () -> fio.run(job));
        String m = e.getMessage();
        assertTrue(m.startsWith("fio exited with 1: "), m);
        assertTrue(m.contains("you need to specify size="), "fio's own words: " + m);
        assertTrue(m.endsWith("; command: " + String.join(" ", fio.command(job))), m);
        assertFalse(m.contains("\n"), m);
    }

    @Test
    void aMissingFioSaysHowToInstallIt() {
        Fio none = new Fio(tmp.resolve("no-such-fio"));
        FioJob job = FioJob.sequentialRead(List.of(file), 128 * 1024, 1, false);
        FioException e = assertThrows(FioException.class, () -> none.run(job));
        String m = e.getMessage();
        assertTrue(m.startsWith("fio could not be started (") && m.contains("apt-get install fio")
                && m.endsWith("; command: " + String.join(" ", none.command(job))), m);
        assertFalse(m.contains("\n"), m);
    }

    @Test
    void theVersionIsFiosOwnLine() throws IOException {
        assertTrue(fio.version().startsWith("fio-"), fio.version());
    }

    /** The parser on fio's real output: a note before the JSON is skipped, a missing section is one line. */
    @Test
    void fiosRealOutputIsParsed() throws Exception {
        List<String> cmd = fio.command(FioJob.randomRead(List.of(file), 8192, 4, false).withIoSize(128 * 1024));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
        String json = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor());
        FioResult r = FioResult.parse("fio: a note fio prints first\n" + json, false);
        assertEquals(128 * 1024, r.ioBytes());
        assertEquals(16, r.ios());
        assertTrue(r.iops() > 0 && r.bwBytes() > 0, r.toString());
        assertEquals(0, FioResult.parse(json, true).ioBytes(), "a read job's write section is there, empty");
        assertEquals("fio's output has no \"write\" section", assertThrows(FioException.class,
                () -> FioResult.parse("{\"jobs\" : [ { \"read\" : { } } ]}", true)).getMessage());
        assertEquals("fio's output has no read.runtime", assertThrows(FioException.class,
                () -> FioResult.parse("{\"jobs\" : [ { \"read\" : { \"io_bytes\" : 1 } } ]}", false)).getMessage());
        assertEquals("fio's output has no jobs", assertThrows(FioException.class, () -> FioResult.parse("{\"jobs\" : []}", false))
                .getMessage());
        assertEquals("no JSON object in fio's output", assertThrows(FioException.class, () -> FioResult.parse("fio: oops", false))
                .getMessage());
        assertTrue(assertThrows(FioException.class, () -> FioResult.parse(json.substring(0, json.length() / 2), false)).getMessage()
                .startsWith("fio's output is not JSON: expected"));
    }
}
