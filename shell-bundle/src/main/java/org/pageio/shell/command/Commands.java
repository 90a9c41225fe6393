package org.pageio.shell.command;

/** Service property names and values shared by the {@code pageio:} Gogo commands. */
public final class Commands {

    /** Gogo's command scope property. */
    public static final String SCOPE = "osgi.command.scope";
    /** Gogo's command function property (repeat it, one per function). */
    public static final String FUNCTION = "osgi.command.function";
    /** Our scope: {@code pageio:methods}, ... */
    public static final String PAGEIO = "pageio";

    private Commands() {
    }
}
