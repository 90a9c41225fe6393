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
public record VacuumOptions(boolean freeze, ScanSettings settings) {

    /** {@code VACUUM} with the buffer manager's settings. */
    public static final VacuumOptions DEFAULT = new VacuumOptions(false, ScanSettings.INHERIT);

    public VacuumOptions {
        settings = settings == null ? ScanSettings.INHERIT : settings;
    }
}
