package org.pageio.table;

import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One scan to run. Immutable.
 *
 * @param kind     which scan
 * @param table    the table's name
 * @param column   indexed column (BITMAP, INDEX, LIMIT, IOS) or text column (FILTER); null otherwise
 * @param lo       lower bound (inclusive) of the index condition
 * @param hi       upper bound (inclusive); Long.MAX_VALUE for LIMIT's {@code col >= lo}
 * @param pattern  the substring of FILTER ({@code LIKE '%pattern%'})
 * @param limit    LIMIT's n; 0 otherwise
 * @param settings per-scan settings
 * @param eqColumn the first key column of an index-only scan on two columns ({@code eqColumn = eqValue}),
 *                 {@code column} then being the second; null otherwise (since 1.6.0)
 * @param eqValue  the value {@code eqColumn} equals; 0 without {@code eqColumn}
 */
public record ScanRequest(ScanKind kind, String table, String column, long lo, long hi, String pattern, long limit,
        ScanSettings settings, String eqColumn, long eqValue) {

    private static final Pattern EQUALITY = Pattern.compile("\\s*([a-z_][a-z0-9_]*)\\s*=\\s*(-?[0-9]+)\\s*");

    public ScanRequest {
        if (settings == null) {
            settings = ScanSettings.INHERIT;
        }
    }

    public ScanRequest(ScanKind kind, String table, String column, long lo, long hi, String pattern, long limit,
            ScanSettings settings) {
        this(kind, table, column, lo, hi, pattern, limit, settings, null, 0);
    }

    /** {@code count(*) WHERE column BETWEEN lo AND hi} by index-only scan over the index on {@code column}. */
    public static ScanRequest indexOnly(String table, String column, long lo, long hi) {
        return new ScanRequest(ScanKind.IOS, table, column, lo, hi, null, 0, null, null, 0);
    }

    /**
     * {@code count(*) WHERE eqColumn = eqValue AND column BETWEEN lo AND hi} by index-only scan over
     * the index on {@code (eqColumn, column)}.
     */
    public static ScanRequest indexOnly(String table, String eqColumn, long eqValue, String column, long lo, long hi) {
        return new ScanRequest(ScanKind.IOS, table, column, lo, hi, null, 0, null, eqColumn, eqValue);
    }

    public static ScanRequest count(String table) {
        return new ScanRequest(ScanKind.COUNT, table, null, 0, 0, null, 0, null);
    }

    public static ScanRequest filter(String table, String column, String pattern) {
        return new ScanRequest(ScanKind.FILTER, table, column, 0, 0, pattern, 0, null);
    }

    public static ScanRequest bitmap(String table, String column, long lo, long hi) {
        return new ScanRequest(ScanKind.BITMAP, table, column, lo, hi, null, 0, null);
    }

    public static ScanRequest index(String table, String column, long lo, long hi) {
        return new ScanRequest(ScanKind.INDEX, table, column, lo, hi, null, 0, null);
    }

    /** {@code LIMIT n} over the index scan from {@code lo}; {@code n} is 1 or more. */
    public static ScanRequest limit(String table, String column, long lo, long n) {
        if (n < 1) {
            throw new IllegalArgumentException("scan limit: N takes a whole number of rows, 1 or more (got " + n
                    + "); usage: " + usage(ScanKind.LIMIT));
        }
        return new ScanRequest(ScanKind.LIMIT, table, column, lo, Long.MAX_VALUE, null, n, null);
    }

    public static ScanRequest checksums(String table) {
        return new ScanRequest(ScanKind.CHECKSUMS, table, null, 0, 0, null, 0, null);
    }

    public ScanRequest with(ScanSettings s) {
        return new ScanRequest(kind, table, column, lo, hi, pattern, limit, s, eqColumn, eqValue);
    }

    /**
     * Parses the command form: {@code count T}, {@code filter T COLUMN PATTERN},
     * {@code bitmap T COLUMN LO HI}, {@code index T COLUMN LO HI}, {@code limit T COLUMN LO N},
     * {@code ios T COLUMN LO HI}, {@code ios T 'COL1 = X' COL2 LO HI}, {@code checksums T}.
     */
    public static ScanRequest parse(String... args) {
        if (args == null || args.length < 2) {
            throw new IllegalArgumentException("usage: " + Arrays.stream(ScanKind.values()).map(ScanRequest::usage)
                    .collect(Collectors.joining(" | ")));
        }
        ScanKind k = ScanKind.byWord(args[0]);
        String t = args[1];
        if (k == ScanKind.IOS) {
            return parseIndexOnly(args);
        }
        int need = usage(k).split(" ").length; // the scan's word and its arguments
        if (args.length != need) {
            throw new IllegalArgumentException("scan " + k.word() + " takes " + (need - 1) + " argument(s) after its name, got "
                    + (args.length - 1));
        }
        return switch (k) {
            case COUNT -> count(t);
            case CHECKSUMS -> checksums(t);
            case FILTER -> filter(t, args[2], args[3]);
            case BITMAP -> bitmap(t, args[2], num(k, "LO", args[3]), num(k, "HI", args[4]));
            case INDEX -> index(t, args[2], num(k, "LO", args[3]), num(k, "HI", args[4]));
            case LIMIT -> limit(t, args[2], num(k, "LO", args[3]), num(k, "N", args[4]));
            case IOS -> parseIndexOnly(args);
        };
    }

    /** {@code ios T COL LO HI} or {@code ios T 'COL1 = X' COL2 LO HI}. */
    private static ScanRequest parseIndexOnly(String... args) {
        ScanKind k = ScanKind.IOS;
        if (args.length == 5) {
            return indexOnly(args[1], args[2], num(k, "LO", args[3]), num(k, "HI", args[4]));
        }
        if (args.length != 6) {
            throw new IllegalArgumentException("scan ios takes 3 arguments after its name (T COL LO HI), or 4 with an"
                    + " equality on the first of two columns (T 'COL1 = X' COL2 LO HI), got " + (args.length - 1));
        }
        Matcher m = EQUALITY.matcher(args[2]);
        if (!m.matches()) {
            throw new IllegalArgumentException("scan ios: the first column's condition takes the form 'COL1 = X' (quoted),"
                    + " X a whole number (got \"" + args[2] + "\"); usage: " + usage(k));
        }
        return indexOnly(args[1], m.group(1), num(k, "X", m.group(2)), args[3], num(k, "LO", args[4]), num(k, "HI", args[5]));
    }

    /** {@code s} as the whole number {@code name} of scan {@code k}, or a refusal naming it and the usage. */
    private static long num(ScanKind k, String name, String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("scan " + k.word() + ": " + name + " takes a whole number (got \"" + s
                    + "\"); usage: " + usage(k));
        }
    }

    /** The command form of one kind of scan: {@code bitmap T COLUMN LO HI}. */
    private static String usage(ScanKind k) {
        return k.word() + switch (k) {
            case COUNT, CHECKSUMS -> " T";
            case FILTER -> " T COLUMN PATTERN";
            case BITMAP, INDEX -> " T COLUMN LO HI";
            case LIMIT -> " T COLUMN LO N";
            case IOS -> " T ['COL1 = X'] COLUMN LO HI";
        };
    }
}
