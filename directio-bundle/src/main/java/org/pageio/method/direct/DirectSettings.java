package org.pageio.method.direct;

import java.util.Locale;
import java.util.Map;

/**
 * The settings of {@code io_method=direct}: {@code engine} (configuration PID
 * {@value DirectIoMethod#PID}, or the framework property {@value DirectIoMethod#ENGINE_PROPERTY}),
 * which submits the I/O, and {@code io_direct_threads}, the size of the threads engine.
 * Immutable and always valid: the constructor rejects a value with a message that names the
 * setting and its valid values. Any thread.
 *
 * @param engine          {@code auto} (io_uring when the probe creates a ring, else threads),
 *                        {@code io_uring} (unavailable when io_uring is), or {@code threads}
 * @param ioDirectThreads I/O threads of the threads engine, 1..{@value #MAX_IO_DIRECT_THREADS}
 *                        (default {@value #DEFAULT_IO_DIRECT_THREADS}); unused by io_uring
 */
public record DirectSettings(EngineChoice engine, int ioDirectThreads) {

    /** The values of the setting {@code engine}. */
    public enum EngineChoice {
        AUTO("auto"), IO_URING("io_uring"), THREADS("threads");

        private final String value;

        EngineChoice(String value) {
            this.value = value;
        }

        /**
         * The engine a setting value names (case-insensitive); blank or {@code null} is {@code auto}.
         *
         * @throws IllegalArgumentException naming the setting, the value and the valid values
         */
        public static EngineChoice parse(String value) {
            String v = value == null ? "" : value.strip().toLowerCase(Locale.ROOT);
            if (v.isEmpty()) {
                return AUTO;
            }
            for (EngineChoice e : values()) {
                if (e.value.equals(v)) {
                    return e;
                }
            }
            throw new IllegalArgumentException("engine = " + value.strip() + " is not one of auto, io_uring, threads");
        }

        @Override
        public String toString() {
            return value;
        }
    }

    public static final int DEFAULT_IO_DIRECT_THREADS = 16;
    public static final int MAX_IO_DIRECT_THREADS = 1024;
    /** {@code engine = auto}, {@code io_direct_threads = 16}. */
    public static final DirectSettings DEFAULTS = new DirectSettings(EngineChoice.AUTO, DEFAULT_IO_DIRECT_THREADS);

    /** @throws IllegalArgumentException naming the offending setting and its valid values */
    public DirectSettings {
        if (engine == null) {
            throw new IllegalArgumentException("engine is not set: valid values are auto, io_uring, threads");
        }
        if (ioDirectThreads < 1 || ioDirectThreads > MAX_IO_DIRECT_THREADS) {
            throw new IllegalArgumentException("io_direct_threads = " + ioDirectThreads + " is out of range: valid values"
                    + " are 1.." + MAX_IO_DIRECT_THREADS);
        }
    }

    /**
     * Reads the component's properties as ConfigAdmin delivered them; {@code engine} falls back on
     * {@code frameworkEngine} (the framework property), then on {@code auto}.
     *
     * @throws IllegalArgumentException naming the offending setting and its valid values
     */
    static DirectSettings from(Map<String, Object> props, String frameworkEngine) {
        Object e = props.get("engine");
        EngineChoice engine = EngineChoice.parse(e != null ? e.toString() : frameworkEngine);
        Object n = props.get("io_direct_threads");
        int threads;
        try {
            threads = n == null ? DEFAULT_IO_DIRECT_THREADS : Integer.parseInt(n.toString().strip());
        } catch (NumberFormatException x) {
            throw new IllegalArgumentException("io_direct_threads = " + n + " is not an integer: valid values are 1.."
                    + MAX_IO_DIRECT_THREADS);
        }
        return new DirectSettings(engine, threads);
    }

    /** The settings in their names, e.g. {@code engine = auto, io_direct_threads = 16}. */
    public String describe() {
        return "engine = " + engine + ", io_direct_threads = " + ioDirectThreads;
    }
}
