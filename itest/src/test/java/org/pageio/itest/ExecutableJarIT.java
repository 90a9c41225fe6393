package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.BeforeClass;
import org.junit.Test;
import org.pageio.itest.kit.ExportedJar;
import org.pageio.itest.kit.ExportedJar.Run;

/**
 * The exported containers, {@code app/target/pageio.jar} (the user's) and
 * {@code app/target/pageio-measure.jar} (the drill's and the soak's), run as {@code ./pageio} runs
 * them: the exec runner's output and exit codes, and the Web Console's credentials. Plain JUnit, no
 * Pax Exam.
 */
public class ExecutableJarIT {

    private static ExportedJar jar;
    private static ExportedJar measuring;
    private static Path data;

    @BeforeClass
    public static void findJar() throws IOException {
        jar = ExportedJar.require();
        measuring = ExportedJar.requireMeasuring();
        data = Path.of(PageioTestBase.dataDirectory()).resolveSibling("pageio-jar-data");
        // conf/ as ./pageio makes it: FileInstall, starting before the settings file is written, would
        // otherwise say on stdout that it is missing, in front of the first test's results
        Files.createDirectories(data.resolve("conf"));
    }

    private static Run exec(String script) throws Exception {
        return jar.exec(data, script);
    }

    /** {@code script} in the measuring container, as {@code ./pageio drill} and {@code ./pageio soak} run it. */
    private static Run measure(String script) throws Exception {
        return measuring.exec(data, script);
    }

    /**
     * The user's container carries neither the drill and the soak nor the fault decorator they
     * need; the measuring container has both, and the same shell.
     */
    @Test
    public void theMeasuringSideIsOnlyInTheMeasuringContainer() throws Exception {
        Run user = exec("lb -s");
        assertEquals("exit code; stderr: " + user.err(), 0, user.code());
        assertTrue(user.out(), user.out().contains("org.pageio.shell") && user.out().contains("org.pageio.web"));
        assertTrue(user.out(), !user.out().contains("org.pageio.measure") && !user.out().contains("org.pageio.soak")
                && !user.out().contains("org.pageio.method.fault"));
        Run drill = exec("pageio:drill --help");
        assertEquals("exit code; stderr: " + drill.err(), 1, drill.code());

        Run m = measure("lb -s");
        assertEquals("exit code; stderr: " + m.err(), 0, m.code());
        assertTrue(m.out(), m.out().contains("org.pageio.measure") && m.out().contains("org.pageio.soak")
                && m.out().contains("org.pageio.method.fault")
                && m.out().contains("org.pageio.shell"));
    }

    @Test
    public void execPrintsResultsAndExitsZero() throws Exception {
        Run r = exec("pageio:methods; pageio:methods --format json");
        assertEquals("exit code; stderr: " + r.err(), 0, r.code());
        assertTrue(r.out(), r.out().matches("(?s)method +\\| available \\| state +\\| cause +\\| bundle\n.*"));
        assertTrue(r.out(), r.out().lines().anyMatch(l -> l.startsWith("sync ") && l.contains("| yes ")));
        assertTrue(r.out(), r.out().lines().anyMatch(l -> l.startsWith("io_uring ") && l.contains("| yes ")));
        assertTrue(r.out(), r.out().contains("{\"method\": \"sync\", \"available\": true"));
    }

    /** exec serves no HTTP without --port: on a fresh data directory it says where the password went, never a URL. */
    @Test
    public void execOnAFreshDataDirectoryPrintsNoWebConsoleUrl() throws Exception {
        Path fresh = Files.createTempDirectory(data, "fresh-data");
        Run r = jar.exec(fresh, "pageio:methods");
        assertEquals("exit code; stderr: " + r.err(), 0, r.code());
        Path file = fresh.resolve("webconsole.password");
        assertTrue(Files.isRegularFile(file));
        assertTrue(r.err(), !r.err().contains("Web Console at") && !r.err().contains("http://"));
        assertTrue(r.err(), r.err().contains("pageio: Web Console password for user admin created in " + file
                + " (this run serves no HTTP)"));
        Run again = jar.exec(fresh, "pageio:methods");
        assertEquals("exit code; stderr: " + again.err(), 0, again.code());
        assertTrue(again.err(), !again.err().contains("Web Console"));
    }

    /**
     * A damaged page read with zero_damaged_pages = on: the user sees one log line for it, in
     * pageio's format, run by hand (the JDK's logging configuration) or as {@code ./pageio} runs
     * it (with app/jul.properties).
     */
    @Test
    public void aDamagedPageIsOneLogLineInPageiosFormat() throws Exception {
        Path damaged = Files.createTempDirectory(data, "damaged");
        Run load = jar.exec(damaged, "pageio:load --rows 10000 t; pageio:set zero_damaged_pages on");
        assertEquals("exit code; stderr: " + load.err(), 0, load.code());
        Path file;
        try (var files = Files.walk(damaged.resolve("base"))) {
            file = files.filter(Files::isRegularFile).findFirst().orElseThrow();
        }
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(file.toFile(), "rw")) {
            f.seek(7L * 8192 + 4000);
            int b = f.read();
            f.seek(7L * 8192 + 4000);
            f.write(b ^ 0xFF);
        }
        Path jul = jar.path().getParent().getParent().resolve("jul.properties");
        for (List<String> options : List.of(List.<String>of(), List.of("-Djava.util.logging.config.file=" + jul))) {
            Run r = jar.exec(damaged, "pageio:scan count t", options);
            assertEquals("exit code; stderr: " + r.err(), 0, r.code());
            assertTrue(r.out(), r.out().contains("count=9967"));
            List<String> damage = r.err().lines().filter(l -> l.contains("block 7")).toList();
            assertEquals(options + ": " + r.err(), 1, damage.size());
            assertTrue(damage.get(0), damage.get(0).matches("\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3} WARNING"
                    + " org\\.pageio\\.bufmgr - invalid page in block 7 of relation pg_default/\\d+ fork main \\(file .*\\):"
                    + " checksum mismatch in block 7: .*; zeroing out page \\(zero_damaged_pages\\)"));
            assertTrue(r.err(), !r.err().contains("logDamage") && !r.err().contains("waitReadBuffers"));
        }
    }

    @Test
    public void execStopsAtFirstFailureWithOneLine() throws Exception {
        Run r = exec("pageio:nosuchcommand; pageio:methods");
        assertEquals(1, r.code());
        List<String> errors = r.err().lines().filter(l -> l.startsWith("pageio: pageio:")).toList();
        assertEquals(r.err(), 1, errors.size());
        assertTrue(r.err(), errors.get(0).startsWith("pageio: pageio:nosuchcommand: no such command; the pageio commands are: "
                + "pageio:aios, pageio:checkpoint, ") && errors.get(0).contains(", pageio:methods, ")
                && errors.get(0).endsWith("; help lists all"));
        assertTrue(r.err(), !r.err().contains("Command not found"));
        assertTrue("no stack trace: " + r.err(), !r.err().contains("\tat "));
        assertTrue("the commands after the failure must not run: " + r.out(), !r.out().contains("sync"));
    }

    /**
     * Arguments that fit none of a command's forms: one line naming what did not fit and the
     * command's options (not Gogo's "Cannot coerce …" in Java types); {@code --help} prints the
     * command's description and goes on.
     */
    @Test
    public void argumentsThatDoNotFitAreNamedAndHelpDescribesTheCommand() throws Exception {
        Run unknown = exec("pageio:stat_io --bogus; pageio:methods");
        assertEquals("exit code; stderr: " + unknown.err(), 1, unknown.code());
        List<String> errors = unknown.err().lines().filter(l -> l.startsWith("pageio: pageio:")).toList();
        assertEquals(unknown.err(), List.of("pageio: pageio:stat_io --bogus: unknown option --bogus; its options:"
                + " -c/--context, -f/--format, -o/--object; flags: -r/--reset; help pageio:stat_io describes them"), errors);
        assertTrue(unknown.out(), !unknown.out().contains("sync"));

        Run count = exec("pageio:set effective_io_concurrency");
        assertEquals("exit code; stderr: " + count.err(), 1, count.code());
        assertTrue(count.err(), count.err().contains("pageio: pageio:set effective_io_concurrency: takes 2 arguments"
                + " (setting, value), got 1; help pageio:set describes them"));
        assertTrue(count.err(), !count.err().contains("Cannot coerce"));

        Run help = measure("pageio:drill --help; pageio:methods");
        assertEquals("exit code; stderr: " + help.err(), 0, help.code());
        assertTrue(help.out(), help.out().contains("--no-fio") && help.out().contains("--eic"));
        assertTrue("the commands after --help run: " + help.out(), help.out().contains("sync"));
        assertTrue("nothing was loaded: " + help.err(), !help.err().contains("drill: loading"));
    }

    /**
     * A settings file with refused lines: each refusal once, in line order, a line that is no
     * setting said to be a syntax error; the commands run, and the run exits 1, since the file's
     * values were not in force.
     */
    @Test
    public void refusedSettingsLinesAtStartMakeTheRunFail() throws Exception {
        Path fresh = Files.createTempDirectory(data, "bad-settings");
        Path file = fresh.resolve("conf").resolve("org.pageio.settings.cfg");
        Files.createDirectories(file.getParent());
        Files.writeString(file, String.join("\n",
                "# a user's settings",              // 1
                "io_frobnicate = 3",                // 2
                "this is garbage",                  // 3
                "effective_io_concurrency = 40",    // 4
                "io_combine_limit = 1GB") + "\n");  // 5
        Run r = jar.exec(fresh, "pageio:settings");
        assertEquals("exit code; stderr: " + r.err(), 1, r.code());
        List<String> refusals = r.err().lines().filter(l -> l.startsWith("pageio: " + file + ":")).toList();
        assertEquals(r.err(), 3, refusals.size());
        assertTrue(r.err(), refusals.get(0).startsWith("pageio: " + file + ":2: unknown setting 'io_frobnicate'"));
        assertEquals(r.err(), "pageio: " + file + ":3: syntax error: expected NAME = VALUE, got \"this is garbage\"", refusals.get(1));
        assertTrue(r.err(), refusals.get(2).startsWith("pageio: " + file + ":5: io_combine_limit = 1GB"));
        assertTrue(r.err(), !r.err().contains("unknown setting 'this'"));
        assertTrue(r.err(), r.err().contains("pageio: the settings file has 3 refused lines (above), so the commands ran"
                + " without their values; exit code 1: fix the file and run again"));
        assertTrue("the commands ran: " + r.out(), r.out().lines().anyMatch(l -> l.startsWith("effective_io_concurrency ")
                && l.contains("| 40 ")));
        assertTrue(r.out(), r.out().lines().anyMatch(l -> l.startsWith("io_method_fallback ")
                && l.endsWith("| a registered method name, or empty for none")));
    }

    /**
     * {@code ./pageio exec --data DIR}: a data directory whose parent is missing is refused naming
     * the parent, and nothing is created; a file is refused in pageio's one line, without mkdir's.
     * The script refuses before it builds or starts anything.
     */
    @Test
    public void theScriptCreatesTheDataDirectorysLastLevelOnly() throws Exception {
        Path script = Path.of(System.getProperty("pageio.script"));
        Path deep = data.resolve("no-such-parent").resolve("dir").resolve("deep");
        Run missing = script(script, "exec", "--data", deep.toString(), "pageio:methods");
        assertEquals("exit code; stderr: " + missing.err(), 2, missing.code());
        assertEquals("pageio: cannot create the data directory " + deep + ": its parent " + deep.getParent()
                + " does not exist; create it first or name another directory\n", missing.err());
        assertTrue("no tree grown", !Files.exists(data.resolve("no-such-parent")));

        Path file = Files.writeString(data.resolve("not-a-directory"), "x\n");
        Run notDir = script(script, "exec", "--data", file.toString(), "pageio:methods");
        assertEquals("exit code; stderr: " + notDir.err(), 2, notDir.code());
        assertEquals("pageio: the data directory " + file + " is not a directory; name a directory (an existing one,"
                + " or a new one in an existing directory)\n", notDir.err());
    }

    /**
     * {@code ./pageio verify} runs the command-line tool, no container: on a cluster initdb made, its
     * first run after a build records itself and makes the start-up cache (saying so on stderr, nothing
     * of it on stdout), the second runs from the cache; both print pg_checksums' summary and exit 0.
     */
    @Test
    public void verifyRunsWithoutTheContainerAndMakesItsStartUpCacheOnce() throws Exception {
        Path script = Path.of(System.getProperty("pageio.script"));
        Path cache = script.getParent().resolve("cli/target/pageio-cli.aot");
        try (org.pageio.pgdata.PostgresServer pg = new org.pageio.pgdata.PostgresServer()) {
            pg.initdb();
            String pg_checksums = pg.pg("pg_checksums", "--check", "-D", pg.data.toString()).out();
            Files.deleteIfExists(cache);
            Run first = script(script, "verify", "--data", data.toString(), "--pgdata", pg.data.toString());
            assertEquals("exit code; stderr: " + first.err(), 0, first.code());
            assertEquals(pg_checksums, first.out());
            assertTrue(first.err(), first.err().contains("pageio: making the start-up cache cli/target/pageio-cli.aot"));
            assertTrue("the cache was made", Files.size(cache) > 0);
            Run second = script(script, "verify", "--data", data.toString(), "--pgdata", pg.data.toString());
            assertEquals("exit code; stderr: " + second.err(), 0, second.code());
            assertEquals(pg_checksums, second.out());
            assertEquals("", second.err());
        }
    }

    private static Run script(Path script, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("bash", script.toString()));
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile(data, "script-out", ".txt");
        Path err = Files.createTempFile(data, "script-err", ".txt");
        Process p = new ProcessBuilder(cmd).directory(script.getParent().toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("./pageio " + String.join(" ", args) + " did not end within 60 s");
        }
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    /** {@code pageio:drill --format json} prints the results document (what the .json file holds) on stdout. */
    @Test
    public void drillPrintsJsonWithFormatJson() throws Exception {
        Run r = measure("pageio:drill --rows 20000 --rounds 1 --cases seq --eic 1 --methods sync --no-fio --results none --format json --data "
                + data.resolve("json-drill")); // its own table: the small drill's stays loaded
        assertEquals("exit code; stderr: " + r.err(), 0, r.code());
        String out = r.out().trim();
        assertTrue(out, out.startsWith("{") && out.endsWith("}"));
        assertTrue(out, out.contains("\"options\": {\"rows\": 20000, \"rounds\": 1, \"methods\": [\"sync\"]"));
        assertTrue(out, !out.contains("Results:"));
    }

    /** Rows that are not a positive whole number: one line naming the option, its range and the usage; nothing loads. */
    @Test
    public void drillRefusesRowsThatAreNotAPositiveWholeNumber() throws Exception {
        for (String rows : List.of("abc", "-1")) {
            Path drillData = data.resolve("bad-rows-drill");
            Run r = measure("pageio:drill --rows " + rows + " --no-fio --results none --data " + drillData);
            assertEquals("exit code; stderr: " + r.err(), 1, r.code());
            List<String> errors = r.err().lines().filter(l -> l.startsWith("pageio: pageio:drill")).toList();
            assertEquals(r.err(), 1, errors.size());
            // the command is named once, not after the script's line and again in the refusal
            assertEquals(r.err(), "pageio: pageio:drill: --rows takes a whole number of rows, 1 or more (got \""
                    + rows + "\"); usage: pageio:drill [--rows N] [--rounds 1..100] [--methods m1,m2] [--eic 1,16,64]"
                    + " [--cases seq,warm,bitmap,index,visibility,hot,concurrent] [--sessions 1,2,8,32]"
                    + " [--vacuum-buffer-usage-limit SIZE] [--shared-buffers N] [--data DIR]"
                    + " [--pgdata DIR --relation base/DBOID/RELFILENODE]"
                    + " [--results DIR|none] [--no-fio]"
                    + " [--seq-hint] [--format text|json]", errors.get(0));
            assertTrue(r.err(), !r.err().contains("Cannot coerce") && !r.err().contains("drill: loading"));
            assertTrue("nothing was created for the drill", !Files.exists(drillData));
        }
    }

    /**
     * The small drill: {@code ./pageio drill --rows 200000 --rounds 1} finishes in under a
     * minute, with every case (cold count(*) at three eic, OS-warm, bitmap heap scan, index scan),
     * the Java and fio baselines, and its three files.
     */
    @Test
    public void smallDrillPrintsTheTableAndWritesItsFiles() throws Exception {
        Path results = Files.createTempDirectory(data, "drill-results");
        long t0 = System.nanoTime();
        Run r = measure("pageio:drill --rows 200000 --rounds 1 --results " + results);
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
        assertEquals("exit code; stderr: " + r.err(), 0, r.code());
        // How long the start takes is a figure for docs/performance.md, not a timed test (CI machines vary).
        System.out.println("ExecutableJarIT: pageio:drill --rows 200000 --rounds 1 took " + seconds + " s (container start included)");
        String out = r.out();
        for (String title : List.of("count(*) of t, cold, effective_io_concurrency=1", "count(*) of t, cold, effective_io_concurrency=16",
                "count(*) of t, cold, effective_io_concurrency=64", "count(*) of t, OS page cache warm",
                "bitmap heap scan of prefetch_test, cold", "index scan of prefetch_test, cold")) {
            assertTrue(title + " in " + out, out.contains(title));
        }
        for (String method : List.of("sync", "worker", "io_uring", "direct")) {
            assertTrue(method + " in " + out, out.lines().anyMatch(l -> l.startsWith(method + " ")));
        }
        assertTrue(out, out.contains("FileChannel (baseline)"));
        assertTrue(out, out.contains("AsynchronousFileChannel (baseline)"));
        assertTrue("fio is installed here and must run: " + out, out.contains("fio seq direct (baseline)")
                && out.contains("fio same reads (baseline)") && out.contains("fio rand depth 64 (baseline)"));
        assertTrue(out, out.contains("What it says:"));
        assertTrue(out, out.contains("Bitmap heap scan, cold, effective_io_concurrency=16:"));
        assertTrue(r.err(), r.err().contains("drill: round 1/1"));
        assertTrue(r.err(), r.err().contains("drill: built the index prefetch_test_val_idx")
                || r.err().contains("drill: reusing table prefetch_test"));
        assertTrue(r.err(), !r.err().contains("NOT COUNTED"));
        try (var files = Files.list(results)) {
            List<String> names = files.map(p -> p.getFileName().toString()).sorted().toList();
            assertEquals(names.toString(), 3, names.size());
            String stem = names.get(0).replace(".json", "");
            assertEquals(List.of(stem + ".json", stem + ".md", stem + ".svg"), names);
            String json = Files.readString(results.resolve(stem + ".json"));
            assertTrue(json, json.contains("\"id\": \"bitmap-cold-eic16\"") && json.contains("\"id\": \"index-cold-eic16\""));
            String svg = Files.readString(results.resolve(stem + ".svg"));
            assertTrue(svg, svg.startsWith("<svg") && svg.contains("index scan of prefetch_test"));
        }
    }

    @Test
    public void webConsoleRejectsAdminAdminAndAcceptsTheGeneratedPassword() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path log = Files.createTempFile(data, "console", ".txt");
        Process p = new ProcessBuilder(jar.java(data, "-Dgosh.args=--nointeractive", "-Dorg.osgi.service.http.port=" + port))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            URI uri = URI.create("http://127.0.0.1:" + port + "/system/console/bundles");
            long deadline = System.currentTimeMillis() + 30_000;
            int anonymous = -1;
            while (System.currentTimeMillis() < deadline && anonymous != 401) {
                anonymous = ExportedJar.status(uri, null);
                if (anonymous != 401) {
                    Thread.sleep(200);
                }
            }
            assertEquals("no answer from the console; log: " + Files.readString(log), 401, anonymous);

            Path file = data.resolve("webconsole.password");
            assertTrue(Files.isRegularFile(file));
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
            String password = Files.readString(file).strip();
            assertTrue(password, password.length() >= 20);

            // the generated password may be configured a moment after the console answers
            int good = -1;
            while (System.currentTimeMillis() < deadline && good != 200) {
                good = ExportedJar.status(uri, "admin:" + password);
                if (good != 200) {
                    Thread.sleep(200);
                }
            }
            assertEquals(200, good);
            assertEquals(401, ExportedJar.status(uri, "admin:admin"));
            assertEquals(401, ExportedJar.status(uri, "admin:wrong-" + password));
            assertTrue(Files.readString(log), Files.readString(log).contains(
                    "pageio: Web Console at http://127.0.0.1:" + port + "/system/console — user admin, password in " + file));
        } finally {
            p.destroy();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }
}
