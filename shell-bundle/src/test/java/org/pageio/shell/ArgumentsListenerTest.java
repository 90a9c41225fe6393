package org.pageio.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.pageio.shell.command.Commands;

/** Lines typed into Gogo's real command processor, with the listener on its whiteboard. */
class ArgumentsListenerTest {

    private ThreadIOImpl threadIo;
    private CommandProcessorImpl gogo;

    @BeforeEach
    void gogo() {
        threadIo = new ThreadIOImpl();
        threadIo.start();
        gogo = new CommandProcessorImpl(threadIo);
        gogo.addCommand(Commands.PAGEIO, new CommandArgumentsTest.Sample(), "set");
        gogo.addCommand(Commands.PAGEIO, new CommandArgumentsTest.Sample(), "show");
        gogo.addListener(new ArgumentsListener(name -> CommandArgumentsTest.methods(
                name.substring(name.indexOf(':') + 1))));
    }

    @AfterEach
    void stop() {
        threadIo.stop();
    }

    /** What the session's console shows after {@code line} failed. */
    private String refused(String line, boolean exec) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        try (CommandSession s = gogo.createSession(InputStream.nullInputStream(), out, out)) {
            if (exec) {
                s.put(ArgumentsListener.EXEC_SESSION, Boolean.TRUE);
            }
            Exception e = assertThrows(Exception.class, () -> s.execute(line), line);
            assertTrue(CommandArguments.isMismatch(e), "Gogo's own refusal still reaches the shell: " + e);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aRefusedLineIsExplainedOnTheConsole() {
        assertEquals("pageio:set: unknown option --bogus; its options: -f/--format; help pageio:set describes them\n",
                refused("pageio:set --bogus a b", false));
        assertEquals("pageio:set: takes 2 arguments (setting, value), got 1; help pageio:set describes them\n",
                refused("pageio:set 'one word'", false));
    }

    @Test
    void theExecRunnersSessionsAndCompoundLinesAreLeftAlone() {
        assertEquals("", refused("pageio:set --bogus a b", true));
        assertEquals("", refused("pageio:set a b c; pageio:show x", false));
    }

    /** What gosh shows for {@code line}: the console, then the line's value as gosh prints it (or its error). */
    private String typed(String... lines) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        try (CommandSession s = gogo.createSession(InputStream.nullInputStream(), out, out)) {
            for (String line : lines) {
                try {
                    Object r = s.execute(line);
                    if (r != null) {
                        out.println(s.format(r, org.apache.felix.service.command.Converter.INSPECT));
                    }
                } catch (Exception e) {
                    out.println("gogo: " + e.getClass().getSimpleName() + ": " + e.getMessage());
                }
            }
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void everyStatementOfALinePrintsItsResultInOrder() {
        assertEquals("a=b\nc=d\nc=d\n", typed("pageio:set a b; pageio:set c d; pageio:set c d"));
        assertEquals("a=b\nc=d\n", typed("pageio:set a b\npageio:set c d"), "a line break separates statements too");
        // the next line, of one statement, prints once; a statement that fails stops the line, what ran before shows
        String shown = typed("pageio:set a b; pageio:set e f", "pageio:set x y; pageio:set z");
        assertTrue(shown.startsWith("a=b\ne=f\nx=y\ngogo: IllegalArgumentException: Cannot coerce set("), shown);
    }

    /** A console loop as gosh's: itself a command (gosh runs as the job of {@code gosh --login}), executing the lines it reads. */
    public static final class Console {
        public Object console(org.apache.felix.service.command.CommandSession session, String line) throws Exception {
            Object r = session.execute(line);
            if (r != null) {
                session.getConsole().println(session.format(r, org.apache.felix.service.command.Converter.INSPECT));
            }
            return null;
        }
    }

    @Test
    void underAConsoleThatIsAJobItselfEveryStatementPrintsToo() {
        gogo.addCommand("gosh", new Console(), "console");
        assertEquals("a=b\nc=d\nc=d\n", typed("gosh:console 'pageio:set a b; pageio:set c d; pageio:set c d'"));
    }

    @Test
    void aValueUsedInsideAStatementIsNotPrinted() {
        assertEquals("a=x=y\nq=r\n", typed("pageio:set a (pageio:set x y); pageio:set q r"));
    }

    @Test
    void theExecRunnersSessionPrintsNothingOfItsOwn() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        try (CommandSession s = gogo.createSession(InputStream.nullInputStream(), out, out)) {
            s.put(ArgumentsListener.EXEC_SESSION, Boolean.TRUE);
            assertEquals("c=d", s.execute("pageio:set a b; pageio:set c d"));
        }
        assertEquals("", bytes.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aCommandThatDoesNotExistIsAnsweredWithThePageioCommands() {
        String shown = typed("pageio:nosuch");
        assertEquals("pageio:nosuch: no such command; the pageio commands are: pageio:set, pageio:show; help lists all\n"
                + "gogo: CommandNotFoundException: Command not found: pageio:nosuch\n", shown);
        assertEquals("a=b\nnosuch: no such command; the pageio commands are: pageio:set, pageio:show; help lists all\n"
                + "gogo: CommandNotFoundException: Command not found: nosuch\n", typed("pageio:set a b; nosuch x"));
    }

    @Test
    void aLineThatWorksPrintsNothing() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        try (CommandSession s = gogo.createSession(InputStream.nullInputStream(), out, out)) {
            assertEquals("a=b", s.execute("pageio:set a b"));
            assertEquals(List.of(), bytes.toString(StandardCharsets.UTF_8).lines().toList());
        }
    }
}
