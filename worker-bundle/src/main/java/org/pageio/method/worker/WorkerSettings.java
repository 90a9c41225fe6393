package org.pageio.method.worker;

import java.util.List;

/**
 * The pool's settings, named as PostgreSQL 19 names them (all SIGHUP there, all live here):
 * {@code io_min_workers}, {@code io_max_workers}, {@code io_worker_idle_timeout},
 * {@code io_worker_launch_interval}; plus PostgreSQL 18's {@code io_workers}, accepted as
 * {@code io_min_workers = io_max_workers = io_workers}. Immutable and always valid: the
 * constructor rejects an invalid combination with a message that names the values involved.
 * Any thread.
 *
 * @param minWorkers       {@code io_min_workers}, 1..32 (default 2)
 * @param maxWorkers       {@code io_max_workers}, 1..32, at least {@code minWorkers} (default 8)
 * @param idleTimeoutMs    {@code io_worker_idle_timeout} in ms, 0..2147483647 (default 60000);
 *                         0 = a worker above the minimum retires as soon as it is idle
 * @param launchIntervalMs {@code io_worker_launch_interval} in ms, 0..2147483647 (default 100)
 * @param legacyIoWorkers  PostgreSQL 18's {@code io_workers}, 1..32, or {@link #UNSET}; when set,
 *                         {@code minWorkers} and {@code maxWorkers} both equal it
 */
public record WorkerSettings(int minWorkers, int maxWorkers, int idleTimeoutMs, int launchIntervalMs,
        int legacyIoWorkers) {

    /** PostgreSQL's {@code MAX_IO_WORKERS}. */
    public static final int MAX_WORKERS = 32;
    /** {@code io_workers = -1}: not set (use {@code io_min_workers} / {@code io_max_workers}). */
    public static final int UNSET = -1;
    public static final int DEFAULT_MIN_WORKERS = 2;
    public static final int DEFAULT_MAX_WORKERS = 8;
    public static final int DEFAULT_IDLE_TIMEOUT_MS = 60_000;
    public static final int DEFAULT_LAUNCH_INTERVAL_MS = 100;

    /** PostgreSQL 19's defaults: 2..8 workers, 1 minute idle timeout, 100 ms launch interval. */
    public static final WorkerSettings DEFAULTS = new WorkerSettings(DEFAULT_MIN_WORKERS, DEFAULT_MAX_WORKERS,
            DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_LAUNCH_INTERVAL_MS, UNSET);

    /** @throws IllegalArgumentException naming the offending values */
    public WorkerSettings {
        if (legacyIoWorkers != UNSET) {
            if (legacyIoWorkers < 1 || legacyIoWorkers > MAX_WORKERS) {
                throw new IllegalArgumentException("io_workers = " + legacyIoWorkers + " is out of range: valid values"
                        + " are 1.." + MAX_WORKERS + ", or -1 for unset (PostgreSQL 18's name; it sets io_min_workers"
                        + " = io_max_workers)");
            }
            if (minWorkers != legacyIoWorkers || maxWorkers != legacyIoWorkers) {
                throw new IllegalArgumentException("io_workers = " + legacyIoWorkers + " requires io_min_workers = "
                        + "io_max_workers = " + legacyIoWorkers + ", not io_min_workers = " + minWorkers
                        + ", io_max_workers = " + maxWorkers);
            }
        }
        if (maxWorkers < 1 || maxWorkers > MAX_WORKERS) {
            throw new IllegalArgumentException("io_max_workers = " + maxWorkers + " is out of range 1.." + MAX_WORKERS
                    + " (with io_min_workers = " + minWorkers + ")");
        }
        if (minWorkers < 1 || minWorkers > MAX_WORKERS) {
            throw new IllegalArgumentException("io_min_workers = " + minWorkers + " is out of range 1.." + MAX_WORKERS
                    + " (with io_max_workers = " + maxWorkers + ")");
        }
        if (minWorkers > maxWorkers) {
            throw new IllegalArgumentException("io_min_workers = " + minWorkers + " is greater than io_max_workers = "
                    + maxWorkers);
        }
        if (idleTimeoutMs < 0) {
            throw new IllegalArgumentException("io_worker_idle_timeout = " + idleTimeoutMs
                    + " ms is out of range 0.." + Integer.MAX_VALUE);
        }
        if (launchIntervalMs < 0) {
            throw new IllegalArgumentException("io_worker_launch_interval = " + launchIntervalMs
                    + " ms is out of range 0.." + Integer.MAX_VALUE);
        }
    }

    /** PostgreSQL 19 settings. */
    public static WorkerSettings of(int minWorkers, int maxWorkers, int idleTimeoutMs, int launchIntervalMs) {
        return new WorkerSettings(minWorkers, maxWorkers, idleTimeoutMs, launchIntervalMs, UNSET);
    }

    /**
     * Reads a configuration as ConfigAdmin delivered it. {@code io_workers} other than -1 wins over
     * {@code io_min_workers}/{@code io_max_workers} (PostgreSQL 18's meaning: exactly that many).
     *
     * @throws IllegalArgumentException naming the offending values
     */
    static WorkerSettings from(WorkerConfig c) {
        int legacy = c.io__workers();
        if (legacy != UNSET) {
            return new WorkerSettings(legacy, legacy, c.io__worker__idle__timeout(),
                    c.io__worker__launch__interval(), legacy);
        }
        return of(c.io__min__workers(), c.io__max__workers(), c.io__worker__idle__timeout(),
                c.io__worker__launch__interval());
    }

    /** The settings in PostgreSQL's words, e.g. {@code io_min_workers = 2, io_max_workers = 8, ...}. */
    public String describe() {
        return "io_min_workers = " + minWorkers + ", io_max_workers = " + maxWorkers + ", io_worker_idle_timeout = "
                + idleTimeoutMs + " ms, io_worker_launch_interval = " + launchIntervalMs + " ms"
                + (legacyIoWorkers == UNSET ? "" : " (from io_workers = " + legacyIoWorkers + ")");
    }

    /** One row of the settings view. {@code note} is empty when there is nothing to say. */
    public record Setting(String name, String value, String unit, String note) {
    }

    /** The settings view (a {@code pg_settings} of this method), in PostgreSQL's names. */
    public List<Setting> view() {
        boolean legacy = legacyIoWorkers != UNSET;
        String fromLegacy = legacy ? "set by io_workers = " + legacyIoWorkers : "";
        return List.of(
                new Setting("io_min_workers", Integer.toString(minWorkers), "", fromLegacy),
                new Setting("io_max_workers", Integer.toString(maxWorkers), "", fromLegacy),
                new Setting("io_worker_idle_timeout", Integer.toString(idleTimeoutMs), "ms", ""),
                new Setting("io_worker_launch_interval", Integer.toString(launchIntervalMs), "ms", ""),
                new Setting("io_workers", Integer.toString(legacyIoWorkers), "", legacy
                        ? "io_workers is PostgreSQL 18's name, removed in 19: applied as io_min_workers = io_max_workers = "
                                + legacyIoWorkers + " (a fixed pool); use io_min_workers and io_max_workers instead"
                        : "unset; io_workers is PostgreSQL 18's name, replaced by io_min_workers and io_max_workers"));
    }
}
