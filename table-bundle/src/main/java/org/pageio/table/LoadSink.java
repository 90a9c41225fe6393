package org.pageio.table;

import java.util.Locale;

/**
 * Where a load's pages go ({@code pageio:load --sink}); see the table bundle's README, "Which sink".
 */
public enum LoadSink {
    /**
     * Asynchronous writes through the buffer manager's I/O method ({@code io_method}), from the
     * loader's chunks, several in flight; {@code O_DIRECT} when the method is {@code direct}.
     */
    BULK,
    /** {@code O_DIRECT} {@code pwrite}s of 8 MiB chunks from the loader's writer thread, around the I/O method. */
    DIRECT,
    /** Buffered {@code pwrite}s of 8 MiB chunks with {@code fallocate} and early writeback, around the I/O method. */
    BUFFERED;

    /** The sink {@code pageio:load} uses when none is named. */
    public static final LoadSink DEFAULT = BULK;

    /** {@code bulk}, {@code direct} or {@code buffered}; one line naming the valid values otherwise. */
    public static LoadSink parse(String name) {
        for (LoadSink s : values()) {
            if (s.name().equalsIgnoreCase(name.trim())) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown load sink \"" + name + "\"; valid: bulk, direct, buffered");
    }

    /** The name as {@code --sink} takes it. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
