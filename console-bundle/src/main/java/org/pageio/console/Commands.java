package org.pageio.console;

/** Service property names and values shared by the {@code pageio:} Gogo commands. */
final class Commands {

    /** Gogo's command scope property. */
    static final String SCOPE = "osgi.command.scope";
    /** Gogo's command function property (repeat it, one per function). */
    static final String FUNCTION = "osgi.command.function";
    /** Our scope: {@code pageio:methods}, ... */
    static final String PAGEIO = "pageio";

    private Commands() {
    }
}
