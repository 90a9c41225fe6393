package org.pageio.bufmgr.smgr;

import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * A directory that holds relation files, possibly on other storage, with its own I/O concurrency
 * overrides, as PostgreSQL allows per tablespace ({@code ALTER TABLESPACE … SET
 * (effective_io_concurrency = …)}). Immutable; any thread.
 *
 * @param name                     {@code [a-z_][a-z0-9_]*}, at most 63 characters
 * @param directory                absolute, normalized
 * @param effectiveIoConcurrency   override, or {@link #INHERIT}
 * @param maintenanceIoConcurrency override, or {@link #INHERIT}
 */
public record Tablespace(String name, Path directory, int effectiveIoConcurrency, int maintenanceIoConcurrency) {

    /** No override: use the setting. */
    public static final int INHERIT = -1;

    private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

    public Tablespace {
        checkName(name);
        checkConcurrency("effective_io_concurrency", effectiveIoConcurrency);
        checkConcurrency("maintenance_io_concurrency", maintenanceIoConcurrency);
        directory = directory.toAbsolutePath().normalize();
    }

    /** The effective {@code effective_io_concurrency} here, given the setting's value. */
    public int effectiveIoConcurrency(int setting) {
        return effectiveIoConcurrency == INHERIT ? setting : effectiveIoConcurrency;
    }

    /** The effective {@code maintenance_io_concurrency} here, given the setting's value. */
    public int maintenanceIoConcurrency(int setting) {
        return maintenanceIoConcurrency == INHERIT ? setting : maintenanceIoConcurrency;
    }

    static void checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid tablespace name \"" + name
                    + "\": use 1 to 63 of a-z, 0-9 and _, not starting with a digit");
        }
    }

    private static void checkConcurrency(String setting, int value) {
        if (value != INHERIT && (value < 0 || value > 1000)) {
            throw new IllegalArgumentException(setting + " = " + value + " is out of range: valid values are 0..1000");
        }
    }
}
