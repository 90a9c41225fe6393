package org.pageio.shell.command;

import java.util.Locale;

/**
 * A command's usage line and the parsing of its numeric options. The commands take numeric
 * options as text and parse them here: Gogo's own coercion of a {@code long} parameter fails on
 * {@code --rows abc} with {@code Cannot coerce load(Token, Token, Token) to any of …}, naming
 * neither the option nor what it takes, and passes {@code --rows -1} through unchecked. A refusal
 * is one line: {@code pageio:load: --rows takes a whole number of rows, 1 or more (got "abc");
 * usage: pageio:load …}.
 *
 * @param command the command's name with its scope, {@code pageio:load}
 * @param usage   its usage line, starting with the command's name
 */
public record CommandUsage(String command, String usage) {

    /**
     * {@code text} as a whole number in {@code min..max}; {@code what} names the unit in the
     * refusal ({@code rows}, {@code rounds}, {@code 8 kB blocks}; empty for a plain number).
     *
     * @throws IllegalArgumentException naming the option, its valid range, the text given and the usage
     */
    public long whole(String option, String what, String text, long min, long max) {
        long v;
        try {
            v = Long.parseLong(text.strip());
        } catch (NumberFormatException e) {
            throw refuse(option, what, text, min, max);
        }
        if (v < min || v > max) {
            throw refuse(option, what, text, min, max);
        }
        return v;
    }

    /** {@link #whole} for an {@code int} option. */
    public int wholeInt(String option, String what, String text, int min, int max) {
        return (int) whole(option, what, text, min, max);
    }

    private IllegalArgumentException refuse(String option, String what, String text, long min, long max) {
        String range;
        if (min == Long.MIN_VALUE && max == Long.MAX_VALUE) {
            range = "";
        } else if (max == Long.MAX_VALUE || max == Integer.MAX_VALUE) {
            range = String.format(Locale.ROOT, ", %d or more", min);
        } else {
            range = String.format(Locale.ROOT, " from %d to %d", min, max);
        }
        return error(option + " takes a whole number" + (what.isEmpty() ? "" : " of " + what) + range + " (got \"" + text + "\")");
    }

    /** A refusal of this command: {@code pageio:load: PROBLEM; usage: …}. */
    public IllegalArgumentException error(String problem) {
        return new IllegalArgumentException(command + ": " + problem + "; usage: " + usage);
    }
}
