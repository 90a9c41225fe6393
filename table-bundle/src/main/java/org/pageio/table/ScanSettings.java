package org.pageio.table;

import java.util.Locale;
import org.pageio.bufmgr.BufMgrSettings;

/**
 * Settings for one scan, like {@code SET} in a session; a field at -1 (or null) takes the buffer
 * manager's setting. Immutable.
 *
 * @param effectiveIoConcurrency   0..1000 or -1 ({@code maintenance_io_concurrency} for the checksum scan)
 * @param ioCombineLimit           1..128 blocks or -1 (capped at {@code io_max_combine_limit})
 * @param readStreamLookahead      pg18, pg19 or null
 * @param trackIoTiming            show {@code I/O Timings}; null = the buffer manager's setting
 * @param scanSetsVisibilityMap    {@code scan_sets_visibility_map}: the sequential and bitmap heap scans prune
 *                                 pages and set visibility map bits (PostgreSQL 19) or not (PostgreSQL 18);
 *                                 null = the table service's setting (since 2.1.0)
 */
public record ScanSettings(int effectiveIoConcurrency, int ioCombineLimit, BufMgrSettings.Lookahead readStreamLookahead,
        Boolean trackIoTiming, Boolean scanSetsVisibilityMap) {

    public static final ScanSettings INHERIT = new ScanSettings(-1, -1, null, null, null);

    /** The settings without {@code scan_sets_visibility_map} (the table service's applies). */
    public ScanSettings(int effectiveIoConcurrency, int ioCombineLimit, BufMgrSettings.Lookahead readStreamLookahead,
            Boolean trackIoTiming) {
        this(effectiveIoConcurrency, ioCombineLimit, readStreamLookahead, trackIoTiming, null);
    }

    /**
     * Parses {@code name=value[,name=value…]} with PostgreSQL's names: effective_io_concurrency,
     * maintenance_io_concurrency (same slot), io_combine_limit (blocks, or "128kB"),
     * read_stream_lookahead (pg18|pg19), track_io_timing (on|off), scan_sets_visibility_map (on|off).
     * Empty or null = inherit.
     */
    public static ScanSettings parse(String text) {
        ScanSettings s = INHERIT;
        if (text == null || text.isBlank()) {
            return s;
        }
        for (String part : text.split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("setting \"" + p + "\" has no value: use name=value");
            }
            String name = p.substring(0, eq).trim().toLowerCase(Locale.ROOT);
            String value = p.substring(eq + 1).trim().toLowerCase(Locale.ROOT);
            s = switch (name) {
                case "effective_io_concurrency", "maintenance_io_concurrency" ->
                        new ScanSettings(intValue(name, value, 0, 1000), s.ioCombineLimit, s.readStreamLookahead, s.trackIoTiming,
                                s.scanSetsVisibilityMap);
                case "io_combine_limit" -> new ScanSettings(s.effectiveIoConcurrency, blocks(value), s.readStreamLookahead,
                        s.trackIoTiming, s.scanSetsVisibilityMap);
                case "read_stream_lookahead" -> new ScanSettings(s.effectiveIoConcurrency, s.ioCombineLimit,
                        switch (value) {
                            case "pg18" -> BufMgrSettings.Lookahead.PG18;
                            case "pg19" -> BufMgrSettings.Lookahead.PG19;
                            default -> throw new IllegalArgumentException("read_stream_lookahead = " + value + ": use pg18 or pg19");
                        }, s.trackIoTiming, s.scanSetsVisibilityMap);
                case "track_io_timing" -> new ScanSettings(s.effectiveIoConcurrency, s.ioCombineLimit, s.readStreamLookahead,
                        onOff(name, value), s.scanSetsVisibilityMap);
                case "scan_sets_visibility_map" -> new ScanSettings(s.effectiveIoConcurrency, s.ioCombineLimit,
                        s.readStreamLookahead, s.trackIoTiming, onOff(name, value));
                default -> throw new IllegalArgumentException("unknown setting \"" + name
                        + "\": use effective_io_concurrency, io_combine_limit, read_stream_lookahead, track_io_timing"
                        + " or scan_sets_visibility_map");
            };
        }
        return s;
    }

    private static Boolean onOff(String name, String value) {
        return switch (value) {
            case "on", "true", "1" -> Boolean.TRUE;
            case "off", "false", "0" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException(name + " = " + value + ": use on or off");
        };
    }

    private static int blocks(String value) {
        if (value.endsWith("kb")) {
            int kb = intValue("io_combine_limit", value.substring(0, value.length() - 2).trim(), 8, 1024);
            if (kb % 8 != 0) {
                throw new IllegalArgumentException("io_combine_limit = " + value + " is not a multiple of 8kB");
            }
            return kb / 8;
        }
        return intValue("io_combine_limit", value, 1, 128);
    }

    private static int intValue(String name, String value, int min, int max) {
        int v;
        try {
            v = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " = \"" + value + "\" is not a number");
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " = " + v + " is out of range: valid values are " + min + ".." + max);
        }
        return v;
    }
}
