package org.pageio.settings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Hashtable;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.report.TextTable;

/** The settings file as {@code pageio:set} writes it: the template, a line replaced in place, an appended one. */
class SettingsFileTest {

    @TempDir
    Path dir;

    private static TextTable table() {
        TextTable t = new TextTable(SettingsService.HEADER);
        t.row("shared_buffers", "16384", "8kB", "default", "postmaster", "restart", "16..134217728 (8kB)");
        t.row("effective_io_concurrency", "16", "", "default", "user", "restart", "0..1000");
        t.row("io_max_workers", "8", "", "default", "sighup", "live", "1..32");
        return t;
    }

    @Test
    void templateCommentsEverySettingOutWithRangeAndHowItApplies() throws Exception {
        Path file = dir.resolve("conf").resolve(SettingsFile.FILE_NAME);
        SettingsFile.writeTemplate(file, table());
        List<String> lines = Files.readAllLines(file);
        assertTrue(lines.get(0).startsWith("# pageio settings (like postgresql.conf)"), lines.get(0));
        assertTrue(lines.contains("#shared_buffers = 16384" + " ".repeat(40 - 23) + "# 16..134217728 (8kB); restarts the buffer manager"),
                String.join("\n", lines));
        assertTrue(lines.contains("#io_max_workers = 8" + " ".repeat(40 - 19) + "# 1..32; applies live"), String.join("\n", lines));
        assertFalse(Files.exists(file.resolveSibling("." + SettingsFile.FILE_NAME + ".tmp")));
    }

    @Test
    void saveReplacesTheCommentedDefaultThenItsOwnLineAndAppendsOthers() throws Exception {
        Path file = dir.resolve("conf").resolve(SettingsFile.FILE_NAME);
        SettingsFile.writeTemplate(file, table());
        SettingsFile.save(file, "effective_io_concurrency", "32", "pageio:set");
        String once = Files.readString(file);
        assertTrue(once.contains("\neffective_io_concurrency = 32\n"), once);
        assertFalse(once.contains("#effective_io_concurrency ="), once);
        assertTrue(once.matches("(?s).*\n# pageio:set, \\d{4}-\\d\\d-\\d\\dT[0-9:]+Z\neffective_io_concurrency = 32\n.*"), once);

        SettingsFile.save(file, "effective_io_concurrency", "64", "Web Console");
        String twice = Files.readString(file);
        assertEquals(1, twice.lines().filter(l -> l.startsWith("effective_io_concurrency")).count(), twice);
        assertTrue(twice.contains("\neffective_io_concurrency = 64\n"), twice);
        assertEquals(1, twice.lines().filter(l -> l.startsWith("# pageio:set, ") || l.startsWith("# Web Console, ")).count(),
                twice);

        SettingsFile.save(file, "io_method", "sync", "pageio:set");
        assertTrue(Files.readString(file).endsWith("\nio_method = sync\n"), Files.readString(file));
        assertThrows(IllegalArgumentException.class, () -> SettingsFile.save(file, "io_method", "a\nb", "pageio:set"));
    }

    @Test
    void lineNumbersAreThoseOfTheLinesAsFileInstallReadsThem() throws Exception {
        Path file = dir.resolve(SettingsFile.FILE_NAME);
        Files.writeString(file, String.join("\n",
                "# a comment = 1",                  // 1
                "",                                 // 2
                "shared_buffers = 128MB",           // 3
                "  ! another comment",              // 4
                "io_method:worker",                 // 5
                "io_frobnicate 7",                  // 6
                "effective_io_concurrency = 1\\",  // 7: continues on 8
                "   6",                             // 8
                "io_max\\_workers = 4",             // 9: an escaped character in the name
                "shared_buffers = 256MB",           // 10: the last one wins
                "io_workers = a\\\\",               // 11: two backslashes, no continuation
                "io_min_workers = 1") + "\n");      // 12
        assertEquals(java.util.Map.of("shared_buffers", 10, "io_method", 5, "io_frobnicate", 6, "effective_io_concurrency", 7,
                "io_max_workers", 9, "io_workers", 11, "io_min_workers", 12), SettingsFile.lineNumbers(file));
        assertEquals(java.util.Map.of(), SettingsFile.lineNumbers(dir.resolve("missing.cfg")));
        String inMethodDir = "/srv/io_method_tests/conf/" + SettingsFile.FILE_NAME;
        assertFalse(SettingsFile.aboutMethod(inMethodDir + ":3: unknown setting 'x'", inMethodDir), "the path does not count");
        assertTrue(SettingsFile.aboutMethod(inMethodDir + ":5: invalid value for io_method: 'nosuch'", inMethodDir));
        assertFalse(SettingsFile.aboutMethod(inMethodDir + ":2: unknown setting 'io_frobnicate'; known: shared_buffers,"
                + " io_method, io_workers", inMethodDir), "an unknown setting is printed at once, in line order");
    }

    @Test
    void aLineThatIsNoSettingIsASyntaxErrorNotAnUnknownSetting() {
        List<String> lines = List.of(
                "# a comment",                      // 1
                "this is garbage",                  // 2: FileInstall reads the name "this"
                "shared_buffers = 128MB",           // 3
                "io_method worker",                 // 4: PostgreSQL's NAME VALUE
                "lonely",                           // 5: a name, no value
                "= 5",                              // 6: no name
                "io_workers: 3",                    // 7
                "effective_io_concurrency = 1\\",  // 8: continues on 9, not judged
                "   two words");                    // 9
        assertEquals(java.util.Map.of(2, "this is garbage", 5, "lonely", 6, "= 5"), SettingsFile.syntaxErrors(lines));
        assertEquals("/d/conf/x.cfg:2: syntax error: expected NAME = VALUE, got \"this is garbage\"",
                SettingsFile.syntaxError("/d/conf/x.cfg", 2, "this is garbage"));
    }

    @Test
    void refusalsAreListedInLineOrder() {
        String f = "/srv/a:b/conf/" + SettingsFile.FILE_NAME;
        assertEquals(List.of(f + ":2: syntax error", f + ":9: a", f + ":10: b", f + ": no line"),
                SettingsService.inLineOrder(f, List.of(f + ":10: b", f + ": no line", f + ":9: a", f + ":2: syntax error")));
    }

    @Test
    void theTemplateWrittenBeforeAnyMethodRegistersSaysATrueRange() throws Exception {
        TextTable t = table();
        Setting none = Setting.ioMethod(List.of(), "worker");
        t.row(none.name(), "worker", "", "default", "postmaster", "live", none.range());
        Path file = dir.resolve("conf").resolve(SettingsFile.FILE_NAME);
        SettingsFile.writeTemplate(file, t);
        String text = Files.readString(file);
        assertTrue(text.contains("#io_method = worker" + " ".repeat(40 - 19)
                + "# a registered, available I/O method: pageio:methods lists them; applies live\n"), text);
        assertFalse(text.contains("none registered"), text);
    }

    @Test
    void lineMatchingNeedsTheWholeName() {
        assertTrue(SettingsFile.isActive("io_workers = 3", "io_workers"));
        assertTrue(SettingsFile.isActive("  io_workers:3", "io_workers"));
        assertFalse(SettingsFile.isActive("io_workers_x = 3", "io_workers"));
        assertFalse(SettingsFile.isActive("#io_workers = 3", "io_workers"));
        assertTrue(SettingsFile.isCommented("#io_workers = 3", "io_workers"));
    }

    @Test
    void sameSettingsIgnoresServicePidAndComparesArraysByContent() {
        Hashtable<String, Object> a = new Hashtable<>();
        a.put("service.pid", "org.pageio.bufmgr");
        a.put("effective_io_concurrency", 32);
        a.put(SettingsService.CONSOLE_MARK, new String[] {"effective_io_concurrency"});
        Hashtable<String, Object> b = new Hashtable<>();
        b.put("effective_io_concurrency", 32);
        b.put(SettingsService.CONSOLE_MARK, new String[] {"effective_io_concurrency"});
        assertTrue(SettingsService.sameSettings(a, b));
        b.put("effective_io_concurrency", 33);
        assertFalse(SettingsService.sameSettings(a, b));
    }

    @Test
    void aRefusalWhoseMemoryFiguresChangedIsStillTheSameRefusal() {
        String a = "shared_buffers = 134217728 (1 TB) needs more memory than this machine can give now: at most 22.1 GB"
                + " (MemAvailable 22.1 GB; vm.overcommit_memory = 0); lower shared_buffers, e.g. pageio:set shared_buffers 5GB";
        String b = "shared_buffers = 134217728 (1 TB) needs more memory than this machine can give now: at most 21 GB"
                + " (MemAvailable 20.9 GB + 128 MB of the pool in use; vm.overcommit_memory = 0); lower shared_buffers, e.g."
                + " pageio:set shared_buffers 5GB";
        assertEquals(SettingsFile.printedKey(a), SettingsFile.printedKey(b));
        assertFalse(SettingsFile.printedKey(a).equals(SettingsFile.printedKey(a.replace("134217728", "13107200"))));
    }
}
