package org.pageio.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.pageio.api.IoMethod;
import org.pageio.method.direct.DirectIoMethod;
import org.pageio.method.direct.DirectSettings;
import org.pageio.method.posixaio.PosixAioIoMethod;
import org.pageio.method.posixaio.PosixAioSettings;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.uring.UringIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;
import org.pageio.pgdata.PgChecksums;
import org.pageio.pgdata.PgCommands;
import org.pageio.pgdata.PgDataException;

/**
 * {@code ./pageio verify} and {@code ./pageio pgcount} in a plain JVM: the same classes the
 * container's {@code pageio:verify --pgdata} and {@code pageio:pgcount} run ({@link PgCommands}),
 * on one class path, with the method named by the data directory's settings file
 * ({@link CliSettings}) made here instead of bound by Declarative Services. The container's start
 * (the framework, SCR, ConfigAdmin, Gogo, the Web Console and the JIT's work on all of them: about
 * two seconds on two cores) is longer than {@code pg_checksums --check} takes on a 2 GB cluster whose
 * files are cached; a one-shot command over a stopped cluster has no use for hot swaps or a console.
 *
 * <pre>
 * java -jar cli/target/pageio-cli.jar verify --pgdata DIR [--progress] [--jobs N] [--data DIR]
 * java -jar cli/target/pageio-cli.jar pgcount --pgdata DIR RELPATH [--data DIR]
 * </pre>
 *
 * ({@code ./pageio verify} and {@code ./pageio pgcount} run these with the JVM's flags: cli/README.md.)
 * Exit codes are {@code pg_checksums}': 0 when every checksum is right (or the count is done), 1
 * for a bad checksum, a refused cluster or a failed read (one line on standard error:
 * {@code pg_checksums: error: …} or {@code pageio: pgcount: …}), 2 for a usage error.
 */
public final class PageioCli {

    static final String USAGE = "usage: pageio verify --pgdata DIR [--progress] [--jobs N] [--data DIR]\n"
            + "       pageio pgcount --pgdata DIR RELPATH [--data DIR]   (RELPATH as pg_relation_filepath prints it)";

    private PageioCli() {
    }

    public static void main(String[] args) {
        System.exit(run(List.of(args), System.out, System.err));
    }

    /** Runs one command; returns its exit code. Never throws for what a user can get wrong. */
    static int run(List<String> args, PrintStream out, PrintStream err) {
        if (args.isEmpty() || args.getFirst().equals("--help") || args.getFirst().equals("-h")) {
            (args.isEmpty() ? err : out).println(USAGE);
            return args.isEmpty() ? 2 : 0;
        }
        String command = args.getFirst();
        Arguments a;
        try {
            a = Arguments.parse(command, args.subList(1, args.size()));
        } catch (IllegalArgumentException e) {
            err.println("pageio: " + command + ": " + e.getMessage() + "\n" + USAGE);
            return 2;
        }
        if (a.help) {
            out.println(USAGE);
            return 0;
        }
        if (!Files.isDirectory(a.pgdata)) {
            err.println("pageio: " + command + ": \"" + a.pgdata + "\" is not a directory");
            return 1;
        }
        CliSettings settings;
        try {
            settings = CliSettings.of(a.data);
        } catch (CliSettings.InvalidSetting e) {
            err.println("pageio: " + command + ": " + e.getMessage());
            return 1;
        } catch (IOException e) {
            err.println("pageio: " + command + ": could not read " + a.data.resolve(CliSettings.FILE) + ": " + e);
            return 1;
        }
        IoMethod method;
        try {
            method = method(settings.method());
        } catch (RuntimeException e) {
            // e.g. io_uring blocked here: the method's own message says the cause and the fix
            err.println("pageio: " + command + ": io_method=" + settings.method() + " is not available: " + e.getMessage());
            return 1;
        }
        try {
            return command.equals("verify") ? verify(a, method, settings, out, err) : pgcount(a, method, settings, out, err);
        } finally {
            close(method);
        }
    }

    private static int verify(Arguments a, IoMethod method, CliSettings settings, PrintStream out, PrintStream err) {
        try {
            PgChecksums.Result r = PgCommands.verify(a.pgdata, method, settings.bufmgr(), a.jobs, a.progress, err);
            out.println(r.summary());
            out.flush();
            return r.badChecksums() == 0 ? 0 : 1;
        } catch (PgDataException e) {
            err.println("pg_checksums: error: " + e.getMessage());
            return 1;
        } catch (IOException | RuntimeException e) {
            err.println("pg_checksums: error: " + message(e));
            return 1;
        }
    }

    private static int pgcount(Arguments a, IoMethod method, CliSettings settings, PrintStream out, PrintStream err) {
        try {
            out.println(PgCommands.count(a.pgdata, method, settings.bufmgr(), a.relpath));
            return 0;
        } catch (IOException | RuntimeException e) {
            err.println("pageio: pgcount: " + message(e));
            return 1;
        }
    }

    /** The method {@code name}, made and started as outside a container, with its defaults. */
    static IoMethod method(String name) {
        return switch (name) {
            case "sync" -> new SyncIoMethod();
            case "worker" -> new WorkerIoMethod(WorkerSettings.DEFAULTS);
            case "io_uring" -> new UringIoMethod(UringIoMethod.DEFAULT_FORCE_ASYNC);
            case "direct" -> new DirectIoMethod(DirectSettings.DEFAULTS);
            case "posix_aio" -> new PosixAioIoMethod(PosixAioSettings.DEFAULTS);
            default -> throw new IllegalArgumentException("not one of " + CliSettings.METHODS);
        };
    }

    private static void close(IoMethod method) {
        if (method instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                // the run's outcome is already decided; a method that fails to stop its threads dies with the JVM
            }
        }
    }

    private static String message(Throwable e) {
        String m = e.getMessage();
        return m == null || m.isBlank() ? e.toString() : m;
    }

    /** A command's arguments. */
    static final class Arguments {
        Path pgdata;
        Path data = Path.of("data");
        boolean progress;
        boolean help;
        int jobs = Math.max(1, Runtime.getRuntime().availableProcessors());
        String relpath;

        static Arguments parse(String command, List<String> args) {
            if (!command.equals("verify") && !command.equals("pgcount")) {
                throw new IllegalArgumentException("unknown command (verify, pgcount)");
            }
            Arguments a = new Arguments();
            for (int i = 0; i < args.size(); i++) {
                String arg = args.get(i);
                switch (arg) {
                    case "-h", "--help" -> a.help = true;
                    case "-D", "--pgdata" -> a.pgdata = Path.of(value(args, ++i, arg));
                    case "--data" -> a.data = Path.of(value(args, ++i, arg));
                    case "-P", "--progress" -> {
                        requireVerify(command, arg);
                        a.progress = true;
                    }
                    case "-j", "--jobs" -> {
                        requireVerify(command, arg);
                        String v = value(args, ++i, arg);
                        try {
                            a.jobs = Integer.parseInt(v);
                        } catch (NumberFormatException e) {
                            a.jobs = 0;
                        }
                        if (a.jobs < 1 || a.jobs > PgCommands.MAX_JOBS) {
                            throw new IllegalArgumentException("--jobs needs a number of files from 1 to " + PgCommands.MAX_JOBS + ", not '" + v + "'");
                        }
                    }
                    default -> {
                        if (command.equals("pgcount") && a.relpath == null && !arg.startsWith("-")) {
                            a.relpath = arg;
                        } else {
                            throw new IllegalArgumentException("unexpected argument '" + arg + "'");
                        }
                    }
                }
            }
            if (a.help) {
                return a;
            }
            if (a.pgdata == null) {
                throw new IllegalArgumentException("needs --pgdata DIR, a stopped PostgreSQL cluster's data directory");
            }
            if (command.equals("pgcount") && a.relpath == null) {
                throw new IllegalArgumentException("needs RELPATH, the heap's file as pg_relation_filepath prints it (base/5/16384)");
            }
            return a;
        }

        private static String value(List<String> args, int i, String option) {
            if (i >= args.size()) {
                throw new IllegalArgumentException(option + " needs a value");
            }
            return args.get(i);
        }

        private static void requireVerify(String command, String option) {
            if (!command.equals("verify")) {
                throw new IllegalArgumentException(option + " is an option of verify");
            }
        }
    }
}
