package org.pageio.shell;

import java.io.PrintStream;
import java.lang.reflect.Method;
import java.util.List;
import java.util.function.Function;

import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.CommandSessionListener;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;

/**
 * The interactive shell's side of a line, as the exec runner does it for a script:
 * <ul>
 *   <li>every statement's result is printed, not only the last one's ({@link StatementResults}:
 *       {@code pageio:load --rows 1000 t; pageio:scan count t} prints both);</li>
 *   <li>arguments Gogo refused are said in the command's terms ({@link CommandArguments}) on the
 *       session's console: {@code pageio:stat_io: unknown option --x; its options: …}. {@code --help}
 *       or {@code -h} prints Gogo's {@code help} for the command instead. Only a line that is one
 *       plain command is explained (no {@code ;}, pipe or closure);</li>
 *   <li>a command that does not exist is answered with the pageio commands there are
 *       ({@link UnknownCommand}): {@code pageio:nosuch: no such command; the pageio commands are: …}.</li>
 * </ul>
 * Gogo's own line ({@code gogo: IllegalArgumentException: Cannot coerce …},
 * {@code gogo: CommandNotFoundException: …}) follows a refusal: a listener sees the failure but
 * cannot replace it. The exec runner's sessions are skipped ({@link #EXEC_SESSION}): the runner runs
 * one statement at a time and explains its failures in its own one-line format.
 *
 * <p>Gogo's whiteboard calls the listener on the thread that executes the line.
 */
@Component(service = CommandSessionListener.class)
public final class ArgumentsListener implements CommandSessionListener {

    /** Session variable the exec runner sets on its session: explain nothing there. */
    static final String EXEC_SESSION = ".pageio.exec";

    private final Function<String, List<Method>> methods;

    @Activate
    public ArgumentsListener(BundleContext context) {
        this(name -> CommandArguments.methods(context, name));
    }

    /** @param methods a command's methods by its name as typed ({@code pageio:drill} or {@code drill}) */
    ArgumentsListener(Function<String, List<Method>> methods) {
        this.methods = methods;
    }

    @Override
    public void beforeExecute(CommandSession session, CharSequence commandline) {
        if (session.get(EXEC_SESSION) == null) {
            StatementResults.beforeLine(session, commandline);
        }
    }

    @Override
    public void afterExecute(CommandSession session, CharSequence commandline, Object result) {
        // nothing: gosh prints the last statement's result, StatementResults the others'
    }

    @Override
    public void afterExecute(CommandSession session, CharSequence commandline, Exception exception) {
        if (session.get(EXEC_SESSION) != null) {
            return;
        }
        String missing = UnknownCommand.command(exception);
        if (missing != null) {
            session.getConsole().println(UnknownCommand.reply(session, missing));
            return;
        }
        if (!CommandArguments.isMismatch(exception)) {
            return;
        }
        String line = commandline.toString().strip();
        if (line.isEmpty() || line.matches("(?s).*[;|{}()\\[\\]\\n$].*")) {
            return;
        }
        CommandArguments.Reply reply = CommandArguments.reply(session, line, methods);
        if (!reply.known()) {
            return;
        }
        PrintStream console = session.getConsole();
        if (!reply.help()) {
            console.println(reply.name() + ": " + reply.text());
        } else if (reply.text() != null) {
            console.println(reply.text());
        }
    }
}
