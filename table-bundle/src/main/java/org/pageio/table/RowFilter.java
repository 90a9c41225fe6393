package org.pageio.table;

import java.util.Locale;

/**
 * The {@code WHERE} of a {@code DELETE} or {@code UPDATE}: the forms the scans take, plus a modulo.
 * Immutable.
 *
 * <ul>
 *   <li>{@code COL LO HI} or {@code COL BETWEEN LO AND HI} (inclusive, as the index scans' range),
 *       and {@code COL = V}, its one-value form, on an integer column;</li>
 *   <li>{@code COL LIKE '%substring%'} on a text column (as {@code pageio:scan filter});</li>
 *   <li>{@code COL % N = R} (or {@code COL mod N = R}) on an integer column ({@code N} 1 or more;
 *       SQL's remainder, with the sign of {@code COL}).</li>
 * </ul>
 * A condition may come as one word ({@code 'id % 5 = 0'}, quoted in Gogo, which reads a bare
 * {@code %} as the start of an expression): it is split at white space.
 *
 * @param kind      which form
 * @param column    the column named
 * @param lo        RANGE: lower bound; MODULO: N
 * @param hi        RANGE: upper bound; MODULO: R
 * @param pattern   LIKE: the pattern as typed ({@code %substring%})
 */
public record RowFilter(Kind kind, String column, long lo, long hi, String pattern) {

    /** The forms of a filter. */
    public enum Kind {
        RANGE, LIKE, MODULO
    }

    /** The forms, for refusals. */
    public static final String USAGE = "WHERE COL LO HI | WHERE COL BETWEEN LO AND HI | WHERE COL = V | WHERE COL LIKE '%substring%' | WHERE COL % N = R"
            + " (or COL mod N = R)";

    public static RowFilter range(String column, long lo, long hi) {
        return new RowFilter(Kind.RANGE, column, lo, hi, null);
    }

    public static RowFilter like(String column, String pattern) {
        return new RowFilter(Kind.LIKE, column, 0, 0, pattern);
    }

    public static RowFilter modulo(String column, long n, long r) {
        if (n < 1) {
            throw new IllegalArgumentException("WHERE " + column + " % " + n + " = " + r + ": N takes a whole number, 1 or more");
        }
        return new RowFilter(Kind.MODULO, column, n, r, null);
    }

    /**
     * Parses the words after the table name: {@code WHERE} (any case) and one of the forms; a
     * refusal names what is wrong and the forms.
     */
    public static RowFilter parse(String... words) {
        if (words != null) { // a condition quoted whole ('id % 5 = 0') is split into its words
            words = String.join(" ", words).strip().split("\\s+");
        }
        if (words == null || words.length == 0 || !words[0].equalsIgnoreCase("where")) {
            throw new IllegalArgumentException("expected WHERE and a condition; the forms: " + USAGE);
        }
        int n = words.length - 1;
        String col = n >= 1 ? words[1] : null;
        if (n == 3 && words[2].equalsIgnoreCase("like")) {
            return like(col, words[3]);
        }
        if (n == 3 && words[2].equals("=")) {
            long v = num("V", words[3]);
            return range(col, v, v);
        }
        if (n == 3 && words[2].matches("[-+]?[0-9]+")) {
            return range(col, num("LO", words[2]), num("HI", words[3]));
        }
        if (n == 5 && words[2].equalsIgnoreCase("between") && words[4].equalsIgnoreCase("and")) {
            return range(col, num("LO", words[3]), num("HI", words[5]));
        }
        if (n == 5 && (words[2].equals("%") || words[2].equalsIgnoreCase("mod")) && words[4].equals("=")) {
            return modulo(col, num("N", words[3]), num("R", words[5]));
        }
        throw new IllegalArgumentException("bad WHERE \"" + String.join(" ", words) + "\"; the forms: " + USAGE);
    }

    private static long num(String name, String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("WHERE: " + name + " takes a whole number (got \"" + s + "\"); the forms: " + USAGE);
        }
    }

    /** Whether an integer value satisfies a RANGE or MODULO filter. */
    public boolean matches(long v) {
        return switch (kind) {
            case RANGE -> v >= lo && v <= hi;
            case MODULO -> v % lo == hi;
            case LIKE -> throw new IllegalStateException("LIKE filters text");
        };
    }

    /** The condition in SQL: {@code (id % 5) = 0}. */
    @Override
    public String toString() {
        return switch (kind) {
            case RANGE -> lo == hi ? column + " = " + lo : column + " BETWEEN " + lo + " AND " + hi;
            case LIKE -> column + " LIKE '" + pattern.replace("'", "''") + "'";
            case MODULO -> String.format(Locale.ROOT, "(%s %% %d) = %d", column, lo, hi);
        };
    }
}
