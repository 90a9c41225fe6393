package org.pageio.api.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import org.junit.jupiter.api.Test;
import org.pageio.api.AioContext;

/** pageio's one log line, wherever java.util.logging was left at the JDK's defaults. */
class PageioLogFormatTest {

    static final String LINE = "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3} WARNING org\\.pageio\\.bufmgr - invalid page in block 7\\n";

    private static LogRecord warning() {
        LogRecord r = new LogRecord(Level.WARNING, "invalid page in block 7");
        r.setLoggerName("org.pageio.bufmgr");
        r.setSourceClassName("org.pageio.bufmgr.SharedBufferReadv");
        r.setSourceMethodName("logDamage");
        return r;
    }

    @Test
    void oneLineDateLevelLoggerMessage() {
        String s = new PageioLogFormat.OneLine().format(warning());
        assertTrue(s.matches(LINE), s);
    }

    /** This test JVM runs with the JDK's logging configuration: its console handler writes two lines until pageio is used. */
    @Test
    void theFirstUseOfTheAioCoreMakesTheJdksDefaultConsoleHandlerOneLine() throws Exception {
        assertTrue(PageioLogFormat.twoLines(new SimpleFormatter()), "the JDK's default format: the source on a line, then the level");
        Class.forName(AioContext.class.getName(), true, AioContext.class.getClassLoader());
        boolean consoles = false;
        for (Handler h : Logger.getLogger("").getHandlers()) {
            if (h instanceof ConsoleHandler) {
                consoles = true;
                String s = h.getFormatter().format(warning());
                assertTrue(s.matches(LINE), s);
            }
        }
        assertTrue(consoles, "the JDK's default configuration has a console handler on the root logger");
    }

    /** A formatter someone configured is theirs: install() leaves it. */
    @Test
    void aConfiguredFormatterIsLeftAlone() {
        Formatter mine = new Formatter() {
            @Override
            public String format(LogRecord r) {
                return "mine\n";
            }
        };
        assertFalse(PageioLogFormat.twoLines(mine));
        assertFalse(PageioLogFormat.twoLines(new PageioLogFormat.OneLine()));
    }

    /** The format ./pageio's jul.properties sets and the container's run properties set are this one. */
    @Test
    void julPropertiesAndTheBndrunSayTheSameFormat() throws Exception {
        Path app = Path.of("..", "app");
        Properties jul = new Properties();
        jul.load(new StringReader(Files.readString(app.resolve("jul.properties"))));
        assertEquals(PageioLogFormat.FORMAT, jul.getProperty(PageioLogFormat.FORMAT_PROPERTY));
        String bndrun = Files.readString(app.resolve("pageio.bndrun"));
        assertTrue(bndrun.contains("\t" + PageioLogFormat.FORMAT_PROPERTY + "=\"" + PageioLogFormat.FORMAT + "\",\\"), bndrun);
    }
}
