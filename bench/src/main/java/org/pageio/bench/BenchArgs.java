package org.pageio.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.pageio.measure.fio.Fio;
import org.pageio.measure.fio.FioException;

/**
 * The command-line options of a benchmark main, one at a time. A bad option — unknown, without its
 * value, or with a value that does not parse — is reported in one line naming the tool and the
 * option, and the JVM exits with status 2: never a stack trace.
 *
 * <pre>
 * BenchArgs a = new BenchArgs("direct-vs-fio", "--rounds N --keep", args);
 * while (a.next()) {
 *     switch (a.option()) {
 *         case "--rounds" -> rounds = a.intValue();
 *         case "--keep" -> keep = true;
 *         default -> throw a.unknown();
 *     }
 * }
 * </pre>
 */
final class BenchArgs {
    private final String tool;
    private final String usage;
    private final String[] args;
    private int i = -1;

    /** {@code usage}: the options, as the message for an unknown one lists them. */
    BenchArgs(String tool, String usage, String[] args) {
        this.tool = tool;
        this.usage = usage;
        this.args = args;
    }

    /** Moves to the next option; false when there is none. */
    boolean next() {
        return ++i < args.length;
    }

    /** The current option. */
    String option() {
        return args[i];
    }

    /** The current option's value (the next argument). */
    String value() {
        if (i + 1 >= args.length) {
            throw fail(args[i] + " needs a value");
        }
        return args[++i];
    }

    int intValue() {
        return parsed(Integer::parseInt, "a number");
    }

    long longValue() {
        return parsed(Long::parseLong, "a number");
    }

    /** The current option's comma-separated value, each element parsed by {@code parse}. */
    <T> List<T> listValue(Function<String, T> parse) {
        String option = args[i];
        String v = value();
        List<T> out = new ArrayList<>();
        for (String e : v.split(",")) {
            try {
                out.add(parse.apply(e.trim()));
            } catch (IllegalArgumentException x) {
                throw fail(option + " needs a comma-separated list of numbers, not " + v);
            }
        }
        return List.copyOf(out);
    }

    private <T> T parsed(Function<String, T> parse, String what) {
        String option = args[i];
        String v = value();
        try {
            return parse.apply(v);
        } catch (IllegalArgumentException x) {
            throw fail(option + " needs " + what + ", not " + v);
        }
    }

    /** fio on {@code PATH} ({@link Fio#locate}); when it is missing, says how to install it in one line and exits with status 2. */
    Fio fio() {
        try {
            return Fio.locate();
        } catch (FioException e) {
            throw fail(e.getMessage());
        }
    }

    /** The current option is not one of the tool's. */
    RuntimeException unknown() {
        return fail("unknown argument " + args[i] + "; use " + usage);
    }

    /** Reports {@code message} in one line and exits with status 2. Returns nothing, for {@code throw}. */
    RuntimeException fail(String message) {
        System.err.println(tool + ": " + message);
        System.exit(2);
        return new IllegalStateException(message); // not reached
    }
}
