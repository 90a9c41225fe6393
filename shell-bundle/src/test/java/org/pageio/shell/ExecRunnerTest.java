package org.pageio.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.junit.jupiter.api.Test;
import org.pageio.shell.command.CommandUsage;
import org.pageio.shell.command.Commands;

/** The exec runner's one line for a failed command, over Gogo's real command processor. */
class ExecRunnerTest {

    /** A command that refuses its option as every pageio command does, naming itself. */
    public static final class Drill {
        public String drill(String rows) {
            new CommandUsage("pageio:drill", "pageio:drill [--rows N]").whole("--rows", "rows", rows, 1, Long.MAX_VALUE);
            return "ran";
        }
    }

    @Test
    void aMessageThatNamesTheCommandIsNotPrefixedWithTheCommandLineAgain() {
        assertEquals("pageio: pageio:drill: --rows takes a whole number of rows, 1 or more (got \"-5\"); usage: pageio:drill [--rows N]",
                ExecRunner.failure("pageio:drill --rows -5 --no-fio",
                        "pageio:drill: --rows takes a whole number of rows, 1 or more (got \"-5\"); usage: pageio:drill [--rows N]"));
        assertEquals("pageio: pageio:drill: --rows …", ExecRunner.failure("drill -5", "pageio:drill: --rows …"),
                "typed without its scope");
        assertEquals("pageio: pageio:scan count t: table \"t\" does not exist",
                ExecRunner.failure("pageio:scan count t", "table \"t\" does not exist"));
        assertEquals("pageio: pageio:load x: pageio:loader: …", ExecRunner.failure("pageio:load x", "pageio:loader: …"));
    }

    /** Gogo's parse error for a bare % (a modulo, a LIKE pattern) says how to type it. */
    @Test
    void aBarePercentSaysToQuoteIt() {
        assertEquals("pageio: pageio:delete p WHERE id % 5 = 0: bad expression: %; Gogo reads a bare % as the start of an"
                + " expression: quote it ('%', '%substring%')", ExecRunner.failure("pageio:delete p WHERE id % 5 = 0", "bad expression: %"));
    }

    /** Runs {@code script} in the runner's session over a real Gogo; returns stderr. */
    private static String run(List<String> script, int code) throws Exception {
        ThreadIOImpl threadIo = new ThreadIOImpl();
        threadIo.start();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            CommandProcessorImpl gogo = new CommandProcessorImpl(threadIo);
            gogo.addCommand(Commands.PAGEIO, new Drill(), "drill");
            gogo.addCommand(Commands.PAGEIO, new CommandArgumentsTest.Sample(), "set");
            ExecRunner runner = ExecRunner.forTest(gogo, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8));
            assertEquals(code, runner.run(script));
        } finally {
            threadIo.stop();
        }
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theRunnerSaysACommandsRefusalOnce() throws Exception {
        assertEquals("pageio: pageio:drill: --rows takes a whole number of rows, 1 or more (got \"-5\"); usage: pageio:drill [--rows N]\n",
                run(List.of("pageio:drill -5"), 1));
    }

    @Test
    void aCommandThatDoesNotExistIsAnsweredWithThePageioCommands() throws Exception {
        assertEquals("pageio: pageio:nosuch: no such command; the pageio commands are: pageio:drill, pageio:set; help lists all\n",
                run(List.of("pageio:set a b", "pageio:nosuch", "pageio:set c d"), 1));
    }

    /** In the user's container the drill and the soak are missing: the answer says where they run. */
    @Test
    void theMeasuringCommandsAreAnsweredWithWhereTheyRun() {
        assertEquals("pageio:drill: not in this container: it runs in the measuring container, which also carries the"
                + " fault decorator: ./pageio drill (./pageio drill --help lists its options)",
                UnknownCommand.reply("pageio:drill", List.of("pageio:methods")));
        assertEquals("soak: not in this container: it runs in the measuring container, which also carries the"
                + " fault decorator: ./pageio soak (./pageio soak --help lists its options)",
                UnknownCommand.reply("soak", List.of("pageio:methods")));
    }
}
