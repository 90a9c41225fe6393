package org.pageio.settings;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.osgi.service.metatype.AttributeDefinition;
import org.pageio.report.TextTable;

class SettingTest {

    /** A Metatype attribute as Felix's validates it: min/max for integers, options for strings. */
    record Ad(String id, int type, String def, Integer min, Integer max, String... options) implements AttributeDefinition {
        public String getName() { return id; }
        public String getID() { return id; }
        public String getDescription() { return null; }
        public int getCardinality() { return 0; }
        public int getType() { return type; }
        public String[] getOptionValues() { return options.length == 0 ? null : options; }
        public String[] getOptionLabels() { return getOptionValues(); }
        public String[] getDefaultValue() { return new String[] {def}; }
        public String validate(String v) {
            if (type == DOUBLE) {
                double d = Double.parseDouble(v);
                return min != null && d < min ? "less than minimum" : max != null && d > max ? "greater than maximum" : "";
            }
            if (type != INTEGER) {
                return null;
            }
            long n = Long.parseLong(v);
            if (min != null && n < min) {
                return "less than minimum";
            }
            return max != null && n > max ? "greater than maximum" : "";
        }
    }

    static Setting setting(Ad ad, String pid) {
        return SettingsService.fromMetatype(pid, ad);
    }

    static final Setting EIC = setting(new Ad("effective_io_concurrency", AttributeDefinition.INTEGER, "16", 0, 1000),
            Setting.BUFMGR_PID);
    // as bufmgr's BufMgrConfig declares it (16..2^27 = 1TB)
    static final Setting SHARED = setting(new Ad("shared_buffers", AttributeDefinition.INTEGER, "16384", 16, 134217728),
            Setting.BUFMGR_PID);
    /** An int setting Metatype gives only a minimum: the int type is its upper bound. */
    static final Setting SHARED_NO_MAX = setting(new Ad("shared_buffers", AttributeDefinition.INTEGER, "16384", 16, null),
            Setting.BUFMGR_PID);
    static final Setting COMBINE = setting(new Ad("io_combine_limit", AttributeDefinition.INTEGER, "16", 1, 128),
            Setting.BUFMGR_PID);
    static final Setting IDLE = setting(new Ad("io_worker_idle_timeout", AttributeDefinition.INTEGER, "60000", 0, null),
            Setting.WORKER_PID);
    static final Setting IO_WORKERS = setting(new Ad("io_workers", AttributeDefinition.INTEGER, "-1", -1, 32),
            Setting.WORKER_PID);
    static final Setting TIMING = setting(new Ad("track_io_timing", AttributeDefinition.BOOLEAN, "false", null, null),
            Setting.BUFMGR_PID);
    static final Setting LOOKAHEAD = setting(new Ad("read_stream_lookahead", AttributeDefinition.STRING, "pg19", null, null,
            "pg18", "pg19"), Setting.BUFMGR_PID);
    static final Setting METHOD = Setting.ioMethod(List.of("sync", "worker"), "worker");
    static final Setting SCAN_SETS_VM = setting(new Ad("scan_sets_visibility_map", AttributeDefinition.BOOLEAN, "true", null,
            null), Setting.TABLE_PID);
    // as bufmgr's BufMgrConfig declares them
    static final Setting BG_DELAY = setting(new Ad("bgwriter_delay", AttributeDefinition.INTEGER, "200", 10, 10000),
            Setting.BUFMGR_PID);
    static final Setting BG_MAXPAGES = setting(new Ad("bgwriter_lru_maxpages", AttributeDefinition.INTEGER, "100", 0,
            1073741823), Setting.BUFMGR_PID);
    static final Setting BG_MULTIPLIER = setting(new Ad("bgwriter_lru_multiplier", AttributeDefinition.DOUBLE, "2.0", 0, 10),
            Setting.BUFMGR_PID);

    @Test
    void theBackgroundWritersSettingsHavePostgresUnitsRangesAndContext() {
        assertEquals("10..10000 (ms)", BG_DELAY.range());
        assertEquals("0..1073741823", BG_MAXPAGES.range());
        assertEquals("0..10", BG_MULTIPLIER.range());
        assertEquals(Setting.Kind.REAL, BG_MULTIPLIER.kind());
        for (Setting s : List.of(BG_DELAY, BG_MAXPAGES, BG_MULTIPLIER)) {
            assertEquals("sighup", s.context(), s.name());
            assertEquals("live", s.applies(), s.name() + ": the buffer manager restarts only its background writer");
        }
        assertEquals(1000, BG_DELAY.parse("1s", null));
        assertEquals(50, BG_DELAY.parse("50ms", null));
        assertEquals(0, BG_MAXPAGES.parse("0", null));
        assertEquals(2.5, BG_MULTIPLIER.parse("2.5", null));
        assertEquals(2.0, BG_MULTIPLIER.defaultValue());
        assertEquals("bgwriter_delay = 5ms (5 ms) is outside the valid range 10..10000 (ms)",
                assertThrows(IllegalArgumentException.class, () -> BG_DELAY.parse("5ms", null)).getMessage());
        assertEquals("bgwriter_delay = 11s (11000 ms) is outside the valid range 10..10000 (ms)",
                assertThrows(IllegalArgumentException.class, () -> BG_DELAY.parse("11s", null)).getMessage());
        assertEquals("bgwriter_lru_maxpages = -1 is outside the valid range 0..1073741823",
                assertThrows(IllegalArgumentException.class, () -> BG_MAXPAGES.parse("-1", null)).getMessage());
        assertEquals("bgwriter_lru_multiplier = 10.5 is outside the valid range 0..10",
                assertThrows(IllegalArgumentException.class, () -> BG_MULTIPLIER.parse("10.5", null)).getMessage());
        assertEquals("bgwriter_lru_multiplier = NaN is outside the valid range 0..10",
                assertThrows(IllegalArgumentException.class, () -> BG_MULTIPLIER.parse("NaN", null)).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> BG_MULTIPLIER.parse("lots", null)).getMessage()
                .startsWith("invalid value for bgwriter_lru_multiplier: 'lots'; it takes a number"));
    }

    @Test
    void rangesComeFromMetatypeValidation() {
        assertEquals("0..1000", EIC.range());
        assertEquals("16..134217728 (8kB)", SHARED.range());
        assertEquals("16..2147483647 (8kB)", SHARED_NO_MAX.range());
        assertEquals("1..128 (8kB)", COMBINE.range());
        assertEquals("0..2147483647 (ms)", IDLE.range());
        assertEquals("-1, 1..32", IO_WORKERS.range());
        assertEquals("on, off", TIMING.range());
        assertEquals("pg18, pg19", LOOKAHEAD.range());
        assertEquals("sync, worker", METHOD.range());
        assertArrayEquals(new Long[] {null, null}, SettingsService.probeRange(v -> true, 5));
        assertArrayEquals(new Long[] {-7L, 3L}, SettingsService.probeRange(v -> v >= -7 && v <= 3, 0));
    }

    @Test
    void contextAndAppliesFollowPostgresAndThePid() {
        assertEquals("user", EIC.context());
        assertEquals("restart", EIC.applies());
        assertEquals("postmaster", SHARED.context());
        assertEquals("sighup", IDLE.context());
        assertEquals("live", IDLE.applies());
        assertEquals("pageio", SCAN_SETS_VM.context(), "pageio's own: PostgreSQL has no such GUC");
        assertEquals("live", SCAN_SETS_VM.applies(), "the table service reads it at each scan's start");
        assertEquals("on, off", SCAN_SETS_VM.range());
        assertEquals(Boolean.TRUE, SCAN_SETS_VM.defaultValue());
        assertEquals("8kB", SHARED.unit().label);
        assertEquals("ms", IDLE.unit().label);
    }

    @Test
    void integersAndPostgresUnits() {
        assertEquals(32, EIC.parse("32", null));
        assertEquals(16384, SHARED.parse("128MB", null));
        assertEquals(16384, SHARED.parse("16384", null));
        assertEquals(131072, SHARED.parse("1GB", null));
        assertEquals(1, COMBINE.parse("8kB", null));
        assertEquals(16, COMBINE.parse("128kB", null));
        assertEquals(60000, IDLE.parse("60s", null));
        assertEquals(100, IDLE.parse("100ms", null));
        assertEquals(120000, IDLE.parse("2min", null));
        assertEquals(2000, IDLE.parse("2000000us", null));
        assertEquals(-1, IO_WORKERS.parse("-1", null));
    }

    @Test
    void invalidValuesNameTheSettingAndWhatIsValid() {
        String m = assertThrows(IllegalArgumentException.class, () -> EIC.parse("5000", null)).getMessage();
        assertEquals("effective_io_concurrency = 5000 is outside the valid range 0..1000", m);
        m = assertThrows(IllegalArgumentException.class, () -> SHARED.parse("64kB", null)).getMessage();
        assertEquals("shared_buffers = 64kB (8 × 8kB) is outside the valid range 16..134217728 (8kB), that is 128kB..1TB", m);
        m = assertThrows(IllegalArgumentException.class, () -> SHARED.parse("128mb", null)).getMessage();
        assertTrue(m.contains("valid units for shared_buffers are B, kB, MB, GB and TB"), m);
        m = assertThrows(IllegalArgumentException.class, () -> SHARED.parse("12kB", null)).getMessage();
        assertTrue(m.contains("not a whole number of 8kB blocks"), m);
        m = assertThrows(IllegalArgumentException.class, () -> IDLE.parse("5MB", null)).getMessage();
        assertTrue(m.contains("valid units for io_worker_idle_timeout are us, ms, s, min, h and d"), m);
        m = assertThrows(IllegalArgumentException.class, () -> EIC.parse("32ms", null)).getMessage();
        assertTrue(m.contains("effective_io_concurrency takes no unit"), m);
        m = assertThrows(IllegalArgumentException.class, () -> EIC.parse("lots", null)).getMessage();
        assertTrue(m.startsWith("invalid value for effective_io_concurrency: 'lots'"), m);
        m = assertThrows(IllegalArgumentException.class, () -> IO_WORKERS.parse("0", null)).getMessage();
        assertEquals("io_workers = 0 is outside the valid range -1, 1..32", m);
        m = assertThrows(IllegalArgumentException.class, () -> COMBINE.parse("16", v -> false)).getMessage();
        assertTrue(m.startsWith("io_combine_limit = 16 (× 8kB = 128kB) is outside"), m);
        m = assertThrows(IllegalArgumentException.class, () -> SHARED.parse("99999999999999", null)).getMessage();
        assertTrue(m.contains("shared_buffers"), m);
    }

    @Test
    void aValueBeyondTheIntTypeIsRefusedWithItsOwnValueAndTheRealRange() {
        // 10^12 blocks: beyond int; the message once said "outside the valid range >= 16"
        String m = assertThrows(IllegalArgumentException.class, () -> SHARED.parse("1000000000000", null)).getMessage();
        assertEquals("shared_buffers = 1000000000000 (× 8kB = about 7450TB) is outside the valid range 16..134217728 (8kB),"
                + " that is 128kB..1TB", m);
        m = assertThrows(IllegalArgumentException.class, () -> SHARED_NO_MAX.parse("1000000000000", null)).getMessage();
        assertEquals("shared_buffers = 1000000000000 (× 8kB = about 7450TB) is outside the valid range 16..2147483647 (8kB),"
                + " that is 128kB..about 15TB", m);
        m = assertThrows(IllegalArgumentException.class, () -> SHARED.parse("2TB", null)).getMessage();
        assertEquals("shared_buffers = 2TB (268435456 × 8kB) is outside the valid range 16..134217728 (8kB), that is 128kB..1TB", m);
        m = assertThrows(IllegalArgumentException.class, () -> IDLE.parse("3000000000", null)).getMessage();
        assertEquals("io_worker_idle_timeout = 3000000000 is outside the valid range 0..2147483647 (ms)", m);
        m = assertThrows(IllegalArgumentException.class, () -> IDLE.parse("-3000000000", null)).getMessage();
        assertEquals("io_worker_idle_timeout = -3000000000 is outside the valid range 0..2147483647 (ms)", m);
        assertEquals(134217728, SHARED.parse("1TB", null));
        assertEquals(2147483647, SHARED_NO_MAX.parse("2147483647", null));
        assertEquals("128kB", Setting.bytes(16));
        assertEquals("1GB", Setting.bytes(131072));
        assertEquals("1536MB", Setting.bytes(196608));
        assertEquals("about 7450TB", Setting.bytes(1_000_000_000_000L));
        assertEquals("about 68719476TB", Setting.bytes(Long.MAX_VALUE / 1000)); // no long overflow
    }

    @Test
    void booleansEnumsAndMethods() {
        assertEquals(true, TIMING.parse("on", null));
        assertEquals(false, TIMING.parse("OFF", null));
        assertEquals("pg18", LOOKAHEAD.parse("PG18", null));
        assertEquals("(io.method=sync)", METHOD.parse("sync", null));
        assertEquals("sync", METHOD.show("(io.method=sync)"));
        assertEquals("(|(io.method=a)(io.method=b))", METHOD.show("(|(io.method=a)(io.method=b))"));
        String m = assertThrows(IllegalArgumentException.class, () -> METHOD.parse("posix_aio", null)).getMessage();
        assertEquals("invalid value for io_method: 'posix_aio'; registered methods are sync, worker", m);
        m = assertThrows(IllegalArgumentException.class, () -> LOOKAHEAD.parse("pg17", null)).getMessage();
        assertTrue(m.contains("valid values are pg18, pg19"), m);
        m = assertThrows(IllegalArgumentException.class, () -> TIMING.parse("maybe", null)).getMessage();
        assertTrue(m.contains("track_io_timing") && m.contains("on or off"), m);
    }

    @Test
    void theMethodSettingsSayTheirRange() {
        assertEquals("sync, worker", METHOD.range());
        assertEquals("a registered, available I/O method: pageio:methods lists them",
                Setting.ioMethod(List.of(), "worker").range(), "before any method registers");
        Setting fallback = setting(new Ad("io_method_fallback", AttributeDefinition.STRING, "sync", null, null), Setting.BUFMGR_PID);
        assertEquals("a registered method name, or empty for none", fallback.range());
        assertEquals("", setting(new Ad("some_text", AttributeDefinition.STRING, "x", null, null), Setting.BUFMGR_PID).range());
    }

    @Test
    void tableShowsSourceDefaultConfigurationFileOrConsole() throws IOException {
        Map<String, SettingsService.Defined> defs = new LinkedHashMap<>();
        for (Setting s : List.of(SHARED, EIC, TIMING, METHOD, IDLE)) {
            defs.put(s.name(), new SettingsService.Defined(s, null));
        }
        Dictionary<String, Object> bufmgr = new Hashtable<>();
        bufmgr.put("shared_buffers", 32768);
        bufmgr.put("effective_io_concurrency", 64);
        bufmgr.put("ioMethod.target", "(io.method=sync)");
        bufmgr.put(SettingsService.CONSOLE_MARK, new String[] {"effective_io_concurrency", "ioMethod.target"});
        TextTable t = SettingsService.table(defs, pid -> pid.equals(Setting.BUFMGR_PID) ? bufmgr : null);
        String text = t.toString();
        assertTrue(text.startsWith("name                     | setting | unit | source             | context    | applies"),
                text);
        assertTrue(text.contains("shared_buffers           | 32768   | 8kB  | configuration file | postmaster | restart"), text);
        assertTrue(text.contains("effective_io_concurrency | 64      |      | console            | user       | restart | 0..1000"),
                text);
        assertTrue(text.contains("track_io_timing          | off     |      | default"), text);
        assertTrue(text.contains("io_method                | sync    |      | console"), text);
        assertTrue(text.contains("io_method                | sync    |      | console            | postmaster | live"), text);
        assertTrue(text.contains("io_worker_idle_timeout   | 60000   | ms   | default            | sighup     | live"), text);
        assertTrue(t.toJson().contains("{\"name\": \"effective_io_concurrency\", \"setting\": \"64\", \"unit\": \"\", "
                + "\"source\": \"console\", \"context\": \"user\", \"applies\": \"restart\", \"range\": \"0..1000\"}"),
                t.toJson());
    }

    @Test
    void crossChecksAndNotes() {
        Setting min = setting(new Ad("io_min_workers", AttributeDefinition.INTEGER, "2", 1, 32), Setting.WORKER_PID);
        Setting max = setting(new Ad("io_max_workers", AttributeDefinition.INTEGER, "8", 1, 32), Setting.WORKER_PID);
        Setting maxCombine = setting(new Ad("io_max_combine_limit", AttributeDefinition.INTEGER, "16", 1, 128),
                Setting.BUFMGR_PID);
        Map<String, SettingsService.Defined> defs = new LinkedHashMap<>();
        for (Setting s : List.of(min, max, maxCombine, COMBINE)) {
            defs.put(s.name(), new SettingsService.Defined(s, null));
        }
        String m = assertThrows(IllegalArgumentException.class, () -> SettingsService.crossCheck(min, 9, null, defs))
                .getMessage();
        assertTrue(m.startsWith("io_min_workers = 9 is greater than io_max_workers = 8"), m);
        Dictionary<String, Object> cur = new Hashtable<>();
        cur.put("io_min_workers", 4);
        m = assertThrows(IllegalArgumentException.class, () -> SettingsService.crossCheck(max, 3, cur, defs)).getMessage();
        assertTrue(m.startsWith("io_max_workers = 3 is less than io_min_workers = 4"), m);
        SettingsService.crossCheck(max, 4, cur, defs);
        assertEquals("capped at io_max_combine_limit = 16", SettingsService.note(COMBINE, 32, null, defs));
        assertEquals(null, SettingsService.note(COMBINE, 16, null, defs));
    }
}
