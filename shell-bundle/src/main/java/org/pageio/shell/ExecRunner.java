package org.pageio.shell;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Hashtable;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Converter;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.FrameworkListener;
import org.osgi.framework.ServiceRegistration;
import org.osgi.framework.launch.Framework;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.pageio.settings.Container;
import org.pageio.settings.DropFolder;
import org.pageio.settings.SettingsFile;

/**
 * The exec runner: when the framework or system property {@value #Container.EXEC_PROPERTY} holds Gogo
 * commands (separated by {@code ;} or line breaks, see {@link CommandScript}), runs them once the
 * container is fully started, prints each result as the Gogo shell would, and ends the JVM:
 * exit code 0 when every command succeeded, 1 at the first failure, which is reported as one line
 * {@code pageio: <command>: <message>} on stderr and stops the script. Arguments that fit none of a
 * command's forms are said in the command's terms ({@link CommandArguments}); {@code --help} or
 * {@code -h} after a command prints Gogo's {@code help} for it instead.
 *
 * <p>"Fully started" means: the framework reported reaching its final start level and every
 * persistently started bundle is ACTIVE (see {@code Readiness}), the settings file was applied and
 * the drop folder's bundles were handed to {@link DropFolder}; the bnd launcher calls its main
 * thread before the start levels have been climbed, so this wait is needed there too.
 * How the JVM ends depends on the launcher:
 * <ul>
 *   <li>Under the bnd launcher (the exported {@code pageio.jar}; it sets {@code launch.services=true})
 *       the runner registers a {@code Callable<Integer>} with {@code main.thread=true}. The launcher
 *       calls it on its main thread, then stops the framework and exits with the returned code.
 *       Stopping the framework ourselves would race the launcher's own exit (code 117,
 *       "framework stopped").</li>
 *   <li>Elsewhere it runs the commands on its own thread, stops the framework (waiting at most
 *       {@value #STOP_WAIT_SECONDS} s) and calls {@link System#exit}.</li>
 * </ul>
 * In both cases a watchdog halts the JVM with the same code if shutdown takes longer than
 * {@value #STOP_WAIT_SECONDS} s. The Gogo shell bundle must not read stdin meanwhile: start
 * the container with {@code -Dgosh.args=--nointeractive} ({@code ./pageio exec} does).
 */
@Component(immediate = true, service = {})
public final class ExecRunner {

    /** Framework/system property holding the commands to run. */
    static final int STOP_WAIT_SECONDS = 10;
    static final long READY_TIMEOUT_MS = 60_000;
    static final long QUIET_MS = 1_000;

    /** Runs at most once per bundle class loader, even if the component is re-activated. */
    private static final AtomicBoolean STARTED = new AtomicBoolean();

    private final CommandProcessor processor;
    private final BundleContext context;
    /** Where results and failures go: the process's stdout and stderr, or a test's streams. */
    private final PrintStream out;
    private final PrintStream err;
    private volatile ServiceRegistration<?> mainThread;
    private volatile Readiness readiness;

    private ExecRunner(CommandProcessor processor, PrintStream out, PrintStream err) {
        this.processor = processor;
        this.context = null;
        this.out = out;
        this.err = err;
    }

    /** A runner whose {@link #run} prints on {@code out} and {@code err}; it waits for nothing and never exits. */
    static ExecRunner forTest(CommandProcessor processor, PrintStream out, PrintStream err) {
        return new ExecRunner(processor, out, err);
    }

    @Activate
    public ExecRunner(@Reference CommandProcessor processor, BundleContext context) {
        this.processor = processor;
        this.context = context;
        this.out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        this.err = new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
        String script = context.getProperty(Container.EXEC_PROPERTY);
        if (script == null || !STARTED.compareAndSet(false, true)) {
            return;
        }
        List<String> commands = CommandScript.split(script);
        this.readiness = new Readiness(context);
        if ("true".equals(context.getProperty("launch.services"))) {
            Hashtable<String, Object> props = new Hashtable<>();
            props.put("main.thread", Boolean.TRUE);
            mainThread = context.registerService(Callable.class, new MainThread(commands), props);
        } else {
            Thread t = new Thread(() -> runStandalone(context, commands), "pageio-exec");
            t.setDaemon(false);
            t.start();
        }
    }

    @Deactivate
    void deactivate() {
        Readiness r = readiness;
        if (r != null) {
            r.close();
        }
        ServiceRegistration<?> reg = mainThread;
        mainThread = null;
        if (reg != null) {
            try {
                reg.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the framework is stopping
            }
        }
    }

    /**
     * The bnd launcher's main thread. The launcher insists that {@code getClass().getMethod("call")}
     * returns {@code Integer}, which a lambda (erased to {@code Object}) does not.
     */
    private final class MainThread implements Callable<Integer> {
        private final List<String> commands;

        MainThread(List<String> commands) {
            this.commands = commands;
        }

        @Override
        public Integer call() {
            return awaitAndRun(commands);
        }
    }

    /**
     * Waits for the container to be ready, runs the commands, and arms the watchdog that halts the
     * JVM with the result if shutdown hangs. Returns the exit code.
     */
    private int awaitAndRun(List<String> commands) {
        int code;
        try {
            readiness.await();
            // the settings file's values must be in force before the first command (at most 10 s), and
            // the bundles of the drop folder installed and started (at most 30 s)
            boolean settings = SettingsFile.awaitApplied(10_000);
            boolean dropped = dropFolderPassed(30_000);
            if (settings || dropped) {
                Readiness r = readiness;
                if (r != null) {
                    r.awaitServicesQuiet(); // the buffer manager may be restarting, dropped methods registering
                }
            }
            // PostgreSQL refuses to start on a bad line of postgresql.conf; the commands run here (a
            // pageio:set may be what fixes it), but the run fails: the user's settings were not in force
            List<String> refused = SettingsFile.standingRefusals();
            code = run(commands);
            if (!refused.isEmpty()) {
                err.println("pageio: the settings file has " + refused.size() + (refused.size() == 1 ? " refused line" : " refused lines")
                        + " (above), so the commands ran without " + (refused.size() == 1 ? "its value" : "their values")
                        + "; exit code 1: fix the file and run again");
                code = 1;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            code = 1;
        }
        startWatchdog(code);
        return code;
    }

    /** {@link DropFolder#awaitInitialPass}; true at once in a container without FileInstall (no drop folder). */
    private static boolean dropFolderPassed(long millis) throws InterruptedException {
        try {
            return DropFolder.awaitInitialPass(millis);
        } catch (NoClassDefFoundError noFileInstall) {
            return true;
        }
    }

    /** Runs the commands in one Gogo session; returns 0 when all succeeded, else 1. */
    int run(List<String> commands) {
        System.out.flush();
        try (CommandSession session = processor.createSession(InputStream.nullInputStream(), out, err)) {
            session.put(ArgumentsListener.EXEC_SESSION, Boolean.TRUE); // refusals are explained below
            for (String command : commands) {
                try {
                    Object result = session.execute(command);
                    session.put("_", result);
                    if (result != null) {
                        out.println(session.format(result, Converter.INSPECT));
                    }
                    // A command may restart components (pageio:set): let the services settle
                    // before the next one, as a person typing would.
                    Readiness r = readiness;
                    if (r != null) {
                        r.awaitServicesQuiet();
                    }
                } catch (Throwable e) {
                    out.flush();
                    String missing = UnknownCommand.command(e);
                    if (missing != null) {
                        err.println("pageio: " + UnknownCommand.reply(session, missing));
                        return 1;
                    }
                    if (!CommandArguments.isMismatch(Container.rootCause(e))) {
                        err.println(failure(command, Container.message(e)));
                        return 1;
                    }
                    if (!helped(session, command)) {
                        return 1;
                    }
                }
            }
            return 0;
        } finally {
            out.flush();
            err.flush();
        }
    }

    /**
     * The line for a failed command: {@code pageio: <command>: <message>}, or {@code pageio: <message>}
     * when the message already starts with the command's name ({@code pageio:drill: --rows takes …}),
     * so the command is named once.
     */
    static String failure(String command, String message) {
        if (message.startsWith("bad expression: %")) {
            message += "; Gogo reads a bare % as the start of an expression: quote it ('%', '%substring%')";
        }
        String name = CommandArguments.words(command).stream().findFirst().orElse("");
        String function = name.substring(name.indexOf(':') + 1);
        // the message names the command as typed, or with its scope when typed without (drill → pageio:drill)
        if (!function.isEmpty() && (message.startsWith(name + ": ")
                || name.indexOf(':') < 0 && message.matches("(?s)[A-Za-z0-9_-]+:" + java.util.regex.Pattern.quote(function) + ": .*"))) {
            return "pageio: " + message;
        }
        return "pageio: " + command + ": " + message;
    }

    /**
     * After Gogo refused {@code command}'s arguments: prints Gogo's {@code help} for the command and
     * returns true when they ask for it ({@code --help}, {@code -h}); otherwise says on {@code err}
     * what did not fit and returns false.
     */
    private boolean helped(CommandSession session, String command) {
        CommandArguments.Reply reply = CommandArguments.reply(session, command, name -> CommandArguments.methods(context, name));
        if (!reply.help()) {
            err.println("pageio: " + command + ": " + reply.text());
            return false;
        }
        if (reply.text() != null) {
            out.println(reply.text());
        }
        return true;
    }

    private void runStandalone(BundleContext context, List<String> commands) {
        int code = awaitAndRun(commands);
        try {
            Bundle system = context.getBundle(Constants.SYSTEM_BUNDLE_LOCATION);
            system.stop();
            if (system instanceof Framework fw) {
                fw.waitForStop(TimeUnit.SECONDS.toMillis(STOP_WAIT_SECONDS));
            }
        } catch (Exception | LinkageError e) {
            // exit anyway
        }
        System.exit(code);
    }

    /**
     * Waits until the container has started: the framework reported reaching its start level
     * (FrameworkEvent STARTED or STARTLEVEL_CHANGED, seen only when this component was activated
     * during start-up, which is the usual case) and {@link #settled} holds; or, when no such event
     * comes, {@link #settled} has held for {@value #QUIET_MS} ms. Never longer than
     * {@value #READY_TIMEOUT_MS} ms.
     */
    /** How long no service may come or go before the container counts as started. */
    private static final long SERVICES_QUIET_MS = 200;

    private static final class Readiness implements FrameworkListener, org.osgi.framework.ServiceListener {
        private final BundleContext context;
        private volatile boolean levelReached;
        private volatile boolean closed;
        /** Bundles being ACTIVE is not enough: SCR registers their components' services just after. */
        private volatile long lastServiceEvent = System.currentTimeMillis();

        Readiness(BundleContext context) {
            this.context = context;
            context.addFrameworkListener(this);
            context.addServiceListener(this);
        }

        @Override
        public void serviceChanged(org.osgi.framework.ServiceEvent event) {
            lastServiceEvent = System.currentTimeMillis();
        }

        @Override
        public void frameworkEvent(FrameworkEvent event) {
            if (event.getType() == FrameworkEvent.STARTED || event.getType() == FrameworkEvent.STARTLEVEL_CHANGED) {
                levelReached = true;
            }
        }

        void await() throws InterruptedException {
            long start = System.currentTimeMillis();
            long settledSince = -1;
            while (!closed && System.currentTimeMillis() - start < READY_TIMEOUT_MS) {
                long now = System.currentTimeMillis();
                if (Container.settled(context)) {
                    if (levelReached && now - lastServiceEvent >= SERVICES_QUIET_MS) {
                        return;
                    }
                    if (settledSince < 0) {
                        settledSince = now;
                    } else if (now - settledSince >= QUIET_MS) {
                        return;
                    }
                } else {
                    settledSince = -1;
                }
                Thread.sleep(20);
            }
        }

        /** Waits until no service came or went for {@value ExecRunner#SERVICES_QUIET_MS} ms (at most 30 s). */
        void awaitServicesQuiet() throws InterruptedException {
            long deadline = System.currentTimeMillis() + 30_000;
            while (!closed && System.currentTimeMillis() < deadline
                    && System.currentTimeMillis() - lastServiceEvent < SERVICES_QUIET_MS) {
                Thread.sleep(20);
            }
        }

        void close() {
            closed = true;
            try {
                context.removeServiceListener(this);
                context.removeFrameworkListener(this);
            } catch (IllegalStateException stopping) {
                // context no longer valid
            }
        }
    }

    /** Halts the JVM with {@code code} if it is still alive {@value #STOP_WAIT_SECONDS} s from now. */
    private static void startWatchdog(int code) {
        Thread w = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(STOP_WAIT_SECONDS));
                System.err.println("pageio: the container did not stop within " + STOP_WAIT_SECONDS + " s; halting");
                Runtime.getRuntime().halt(code);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "pageio-exec-watchdog");
        w.setDaemon(true);
        w.start();
    }
}
