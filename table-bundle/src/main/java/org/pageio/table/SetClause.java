package org.pageio.table;

/**
 * The {@code SET} of an {@code UPDATE}: one integer column set to a constant or to an integer
 * column of the same row plus a constant ({@code SET cat = 7}, {@code SET cat = cat + 1000},
 * {@code SET cat = id - 1}). Immutable.
 *
 * @param column the column set
 * @param source the column the new value comes from, or null for a constant
 * @param value  the constant, or what is added to {@code source}
 */
public record SetClause(String column, String source, long value) {

    /** The forms, for refusals. */
    public static final String USAGE = "SET COL = V | SET COL = COL2 + N | SET COL = COL2 - N";

    /** Parses {@code SET COL = V} or {@code SET COL = COL2 + N} (or {@code - N}); a refusal names the forms. */
    public static SetClause parse(String... words) {
        if (words != null) {
            words = String.join(" ", words).strip().split("\\s+");
        }
        if (words == null || words.length < 1 || !words[0].equalsIgnoreCase("set")) {
            throw new IllegalArgumentException("expected SET and an assignment; the forms: " + USAGE);
        }
        if (words.length == 4 && words[2].equals("=")) {
            return new SetClause(words[1], null, num("V", words[3]));
        }
        if (words.length == 6 && words[2].equals("=") && (words[4].equals("+") || words[4].equals("-"))) {
            long n = num("N", words[5]);
            return new SetClause(words[1], words[3], words[4].equals("+") ? n : Math.negateExact(n));
        }
        throw new IllegalArgumentException("bad SET \"" + String.join(" ", words) + "\"; the forms: " + USAGE);
    }

    private static long num(String name, String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("SET: " + name + " takes a whole number (got \"" + s + "\"); the forms: " + USAGE);
        }
    }

    @Override
    public String toString() {
        return "SET " + column + " = " + (source == null ? Long.toString(value)
                : source + (value < 0 ? " - " + -value : " + " + value));
    }
}
