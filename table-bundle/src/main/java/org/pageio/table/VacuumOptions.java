package org.pageio.table;

/**
 * How {@link TableService#vacuum} runs, as PostgreSQL's {@code VACUUM (FREEZE, VERBOSE)} options
 * and {@code SET} for its session. Immutable.
 *
 * @param freeze   {@code VACUUM FREEZE}: freeze every tuple visible to all, and scan every page the
 *                 visibility map does not mark all-frozen (an aggressive vacuum)
 * @param settings {@code maintenance_io_concurrency} (the settings' {@code effective_io_concurrency}
 *                 slot), {@code io_combine_limit}, {@code track_io_timing} for this run; the buffer
 *                 manager's settings otherwise
 * @since 2.1.0
 */
public record VacuumOptions(boolean freeze, ScanSettings settings, long bufferUsageLimitKb) {

    /** {@code VACUUM} with the buffer manager's settings. */
    public static final VacuumOptions DEFAULT = new VacuumOptions(false, ScanSettings.INHERIT);

    /** {@link #bufferUsageLimitKb} for PostgreSQL's default ring ({@code vacuum_buffer_usage_limit} = 2MB). */
    public static final long DEFAULT_RING = -1;

    /**
     * @param bufferUsageLimitKb {@code VACUUM (BUFFER_USAGE_LIMIT …)} in kB: the vacuum ring's size,
     *                           0 for none (VACUUM may then fill shared buffers), or {@link #DEFAULT_RING}
     */
    public VacuumOptions {
        settings = settings == null ? ScanSettings.INHERIT : settings;
        if (bufferUsageLimitKb != DEFAULT_RING && bufferUsageLimitKb != 0
                && (bufferUsageLimitKb < 128 || bufferUsageLimitKb > 16L * 1024 * 1024)) {
            throw new IllegalArgumentException("BUFFER_USAGE_LIMIT = " + bufferUsageLimitKb + "kB is out of range: valid values"
                    + " are 0 (no ring) or 128kB .. 16GB");
        }
    }

    /** With the default ring. */
    public VacuumOptions(boolean freeze, ScanSettings settings) {
        this(freeze, settings, DEFAULT_RING);
    }

    /** Parses {@code BUFFER_USAGE_LIMIT}'s value: {@code 0}, {@code 256kB}, {@code 64MB}, {@code 1GB}, or a number of kB. */
    public static long parseBufferUsageLimit(String text) {
        String t = text.trim().toLowerCase(java.util.Locale.ROOT);
        long unit = 1;
        if (t.endsWith("kb")) {
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("mb")) {
            unit = 1024;
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("gb")) {
            unit = 1024 * 1024;
            t = t.substring(0, t.length() - 2);
        }
        try {
            return Math.multiplyExact(Long.parseLong(t.trim()), unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("BUFFER_USAGE_LIMIT = \"" + text + "\" is not a size: use 0, or 128kB .. 16GB"
                    + " (e.g. 256MB)");
        }
    }
}
