package org.pageio.shell;

import java.io.PrintStream;
import java.lang.reflect.Field;
import java.util.List;

import org.apache.felix.gogo.runtime.Parser;
import org.apache.felix.gogo.runtime.Token;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Converter;
import org.apache.felix.service.command.Job;
import org.apache.felix.service.command.JobListener;
import org.apache.felix.service.command.Result;

/**
 * Prints the result of every statement of an interactive line but the last, as it returns. Gogo
 * runs a line such as {@code pageio:load --rows 1000 t; pageio:scan count t} as one job per
 * top-level statement (or pipeline) and returns only the last job's value, which the shell (gosh)
 * prints; the others' values would be lost. This {@link JobListener}, set on the session once,
 * sees each job end ({@code Done}) with its result: a job of the line itself (its parent is the job
 * that was current when the line started, not one of the line's: not a statement of a closure or of
 * {@code (…)}) that ran in the foreground, succeeded with a non-null value and is not
 * the line's last executable has its value printed on the session's console, formatted as gosh
 * formats the last ({@link Converter#INSPECT}). The last executable is found by its offset in the
 * line, parsed with Gogo's own {@link Parser} ({@link #beforeLine}), so a line repeating the same
 * command prints each result. A job listener the session already had is called first.
 */
final class StatementResults implements JobListener {

    /** Session variable holding the session's instance. */
    static final String VARIABLE = ".pageio.statementResults";

    private final CommandSession session;
    private final JobListener previous;
    /** Offset of the current line's last top-level executable, or -1 (a line of one statement: nothing to do). */
    private volatile int lastStart = -1;
    /**
     * The job that was current when the line started: the parent of the line's own jobs. Null when
     * the line runs outside any job (a test, a telnet session); gosh runs its console loop as a
     * job itself ({@code gosh --login}), so there it is gosh's job.
     */
    private volatile Job lineParent;

    private StatementResults(CommandSession session, JobListener previous) {
        this.session = session;
        this.previous = previous;
    }

    /** Before {@code line} runs in {@code session}: notes its last statement, installing the listener once. */
    static void beforeLine(CommandSession session, CharSequence line) {
        int last = lastStatementStart(line);
        Object current = session.get(VARIABLE);
        StatementResults r;
        if (current instanceof StatementResults s) {
            r = s;
        } else {
            if (last < 0) {
                return; // nothing to print for this line; install on the first line that needs it
            }
            r = new StatementResults(session, jobListenerOf(session));
            session.put(VARIABLE, r);
            session.setJobListener(r);
        }
        r.lineParent = Job.Utils.current();
        r.lastStart = last;
    }

    /**
     * The offset in {@code line} of its last top-level executable (statement or pipeline) when it
     * has more than one, else -1 (one statement, or a line Gogo cannot parse: it will say so).
     */
    static int lastStatementStart(CharSequence line) {
        try {
            List<Parser.Executable> tokens = new Parser(line).program().tokens();
            int executables = 0;
            Token last = null;
            for (Parser.Executable e : tokens) {
                if (!(e instanceof Parser.Operator)) {
                    executables++;
                    last = e;
                }
            }
            return executables > 1 && last != null ? last.start() : -1;
        } catch (Exception | LinkageError e) {
            return -1;
        }
    }

    @Override
    public void jobChanged(Job job, Job.Status previousStatus, Job.Status current) {
        if (previous != null) {
            previous.jobChanged(job, previousStatus, current);
        }
        int last = lastStart;
        if (current != Job.Status.Done || previousStatus != Job.Status.Foreground || job.parent() != lineParent || last < 0
                || !(job.command() instanceof Token t) || t.start() >= last) {
            return;
        }
        Result r = job.result();
        if (r == null || r.exception() != null || r.result() == null
                || Boolean.FALSE.equals(session.get(".Gogo.format"))) {
            return;
        }
        PrintStream console = session.getConsole();
        console.println(session.format(r.result(), Converter.INSPECT));
        console.flush();
    }

    /** The job listener {@code session} has (Gogo offers no getter), or null. */
    private static JobListener jobListenerOf(CommandSession session) {
        for (Class<?> c = session.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField("jobListener");
                f.setAccessible(true);
                return f.get(session) instanceof JobListener l ? l : null;
            } catch (NoSuchFieldException e) {
                // look in the superclass
            } catch (ReflectiveOperationException | RuntimeException e) {
                return null;
            }
        }
        return null;
    }
}
