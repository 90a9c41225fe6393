package org.pageio.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.pageio.settings.RegisteredMethods;
import org.pageio.shell.command.Commands;

/**
 * {@code pageio:soak}'s options as a person types them, through Gogo's real command processor: a
 * bad value is one line naming the option, what it takes and the usage, before anything starts.
 */
class SoakCommandTest {

    private static final String USAGE = "; usage: pageio:soak [--minutes N] [--sessions 1..32] [--swap-every MS] [--seed N]";

    private ThreadIOImpl threadIo;
    private CommandProcessorImpl gogo;

    @BeforeEach
    void start() {
        threadIo = new ThreadIOImpl();
        threadIo.start();
        gogo = new CommandProcessorImpl(threadIo);
        // no bundle context: every refusal below comes before the soak would look at the data directory
        gogo.addCommand(Commands.PAGEIO, new SoakCommand(null, new RegisteredMethods()), "soak");
    }

    @AfterEach
    void stop() {
        gogo.stop();
        threadIo.stop();
    }

    private String refused(String line) {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        Exception e = assertThrows(Exception.class, () -> {
            try (CommandSession s = gogo.createSession(InputStream.nullInputStream(), out, out)) {
                s.execute(line);
            }
        }, line);
        assertEquals(1, e.getMessage().lines().count(), e.getMessage());
        return e.getMessage();
    }

    @Test
    void badNumbersNameTheOptionAndTheUsage() {
        assertEquals("pageio:soak: --minutes takes a number of minutes above 0, up to 1440 (got \"abc\")" + USAGE,
                refused("pageio:soak --minutes abc"));
        assertEquals("pageio:soak: --minutes takes a number of minutes above 0, up to 1440 (got \"0\")" + USAGE,
                refused("pageio:soak --minutes 0"));
        assertEquals("pageio:soak: --sessions takes a whole number of sessions from 1 to 32 (got \"0\")" + USAGE,
                refused("pageio:soak --sessions 0"));
        assertEquals("pageio:soak: --swap-every takes a whole number of milliseconds from 10 to 3600000 (got \"x\")" + USAGE,
                refused("pageio:soak --swap-every x"));
        assertEquals("pageio:soak: --seed takes a whole number (got \"1.5\")" + USAGE, refused("pageio:soak --seed 1.5"));
    }
}
