package org.pageio.api.internal;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * pageio's one log line: {@code 2026-12-07 01:42:47.123 WARNING org.pageio.bufmgr - message}.
 * {@code app/jul.properties} sets the same {@link #FORMAT} for java.util.logging, and
 * {@code app/pageio.bndrun} for a run without that file and for slf4j-simple (Jetty, the Web
 * Console). Where neither holds (a jar run by hand with the JDK's logging configuration, a test
 * container), {@link #install} gives the JDK's default console handler this format: only a
 * {@link ConsoleHandler} of the root logger whose {@link SimpleFormatter} writes a record on two
 * lines (the JDK's default), never a handler or format someone configured. Idempotent; any thread.
 */
public final class PageioLogFormat {

    /** {@code java.util.logging.SimpleFormatter.format}: date, time to the millisecond, level, logger, message. */
    public static final String FORMAT = "%1$tF %1$tT.%1$tL %4$s %3$s - %5$s%6$s%n";

    /** The property {@link SimpleFormatter} reads its format from. */
    public static final String FORMAT_PROPERTY = "java.util.logging.SimpleFormatter.format";

    private static volatile boolean installed;

    private PageioLogFormat() {
    }

    /** Gives the root logger's console handlers {@link #FORMAT} where they still have the JDK's two-line default. */
    public static void install() {
        if (installed) {
            return;
        }
        synchronized (PageioLogFormat.class) {
            if (installed) {
                return;
            }
            installed = true;
            try {
                for (Handler h : Logger.getLogger("").getHandlers()) {
                    if (h instanceof ConsoleHandler && twoLines(h.getFormatter())) {
                        h.setFormatter(new OneLine());
                    }
                }
            } catch (RuntimeException | LinkageError e) {
                // logging stays as configured
            }
        }
    }

    /** Whether {@code f} is a {@link SimpleFormatter} that writes a record on more than one line. */
    static boolean twoLines(Formatter f) {
        if (!(f instanceof SimpleFormatter)) {
            return false;
        }
        String s = f.format(new LogRecord(Level.WARNING, "x"));
        return s.strip().contains("\n");
    }

    /** {@link SimpleFormatter} with {@link #FORMAT}, whatever the properties say. */
    public static final class OneLine extends Formatter {

        @Override
        public String format(LogRecord r) {
            ZonedDateTime when = ZonedDateTime.ofInstant(r.getInstant(), ZoneId.systemDefault());
            String source = r.getSourceClassName() == null ? r.getLoggerName()
                    : r.getSourceClassName() + (r.getSourceMethodName() == null ? "" : " " + r.getSourceMethodName());
            String thrown = "";
            if (r.getThrown() != null) {
                StringWriter sw = new StringWriter();
                try (PrintWriter pw = new PrintWriter(sw)) {
                    pw.println();
                    r.getThrown().printStackTrace(pw);
                }
                thrown = sw.toString();
            }
            return String.format(FORMAT, when, source, r.getLoggerName(), r.getLevel().getLocalizedName(), formatMessage(r), thrown);
        }
    }
}
