package org.pageio.shell;

import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

import org.apache.felix.gogo.runtime.CommandNotFoundException;
import org.apache.felix.service.command.CommandSession;
import org.pageio.shell.command.Commands;

/**
 * Gogo's {@code Command not found: pageio:nosuch}, said as pageio says it: {@code pageio:nosuch: no
 * such command; the pageio commands are: pageio:aios, pageio:checkpoint, …; help lists all}. The
 * names come from the session's command processor ({@code .commands}), so a command another bundle
 * adds (the drill) is listed where it is installed.
 */
final class UnknownCommand {

    private UnknownCommand() {
    }

    /** The command Gogo found no function for, when {@code t} (or its root cause) is that refusal; else null. */
    static String command(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof CommandNotFoundException nf) {
                return nf.getCommand();
            }
        }
        return null;
    }

    /** The one-line answer for {@code command}, listing the pageio commands {@code session} knows. */
    static String reply(CommandSession session, String command) {
        return reply(command, names(session.get(".commands")));
    }

    /**
     * The commands of the measuring container (app/pageio-measure.bndrun), which the user's does not
     * carry: their script command, said instead of "no such command" where they are missing.
     */
    private static final java.util.Map<String, String> MEASURING = java.util.Map.of(
            "pageio:drill", "./pageio drill", "pageio:soak", "./pageio soak");

    static String reply(String command, Collection<String> known) {
        String prefix = Commands.PAGEIO + ":";
        String measuring = MEASURING.get(command.startsWith(prefix) ? command : prefix + command);
        if (measuring != null) {
            return command + ": not in this container: it runs in the measuring container, which also carries the"
                    + " fault decorator: " + measuring + " (" + measuring + " --help lists its options)";
        }
        List<String> pageio = new TreeSet<>(known).stream().filter(n -> n.startsWith(prefix)).toList();
        return command + ": no such command; "
                + (pageio.isEmpty() ? "no pageio commands are registered" : "the pageio commands are: " + String.join(", ", pageio))
                + "; help lists all";
    }

    private static Collection<String> names(Object commands) {
        if (commands instanceof Collection<?> c) {
            return c.stream().map(String::valueOf).toList();
        }
        return List.of();
    }
}
