package org.pageio.method.fault;

import java.util.List;
import java.util.Locale;

/**
 * Which I/Os a {@link FaultInjectingMethod} spoils, and how. Immutable; any thread.
 *
 * <p>A rule matches an I/O when its operation matches, its target description (relation, blocks,
 * file name) contains {@code targetContains} (if given), its byte range overlaps
 * {@code [fromOffset, toOffset)}, and a seeded coin with probability {@code fraction} says yes;
 * a rule fires at most {@code maxCount} times ({@code -1}: always). The first matching rule wins.
 */
public record FaultPlan(List<Rule> rules) {

    /** What to do to a matching I/O. */
    public enum Kind {
        /** Complete with -EIO, without touching the file. */
        EIO,
        /** Perform the read, then report only half of it (rounded down to 4 KiB): a short read. */
        SHORT_READ,
        /** Complete a write with -ENOSPC, without writing. */
        ENOSPC,
        /**
         * Write only the first half of a write (rounded down to 4 KiB, at least 4 KiB short of it)
         * and report that many bytes, as a kernel does when the disk fills up mid-write.
         */
        SHORT_WRITE,
        /**
         * Write only the first 4 KiB of a write's first page, the write's later pages whole, and
         * report the whole write done: that one page is torn on disk as by a crash in the middle of
         * its write, and only its checksum can tell; no other page is left stale.
         */
        TORN_WRITE,
        /** Perform it on another thread after {@code delayMillis}. */
        DELAY,
        /** Perform the batch's matching I/Os, then complete them in reverse order. */
        REORDER
    }

    /** Operations a rule applies to. */
    public enum Op {
        ANY, READ, WRITE, FSYNC
    }

    /** One rule; see the class comment. */
    public record Rule(Kind kind, Op op, String targetContains, long fromOffset, long toOffset, double fraction,
            int maxCount, long delayMillis) {

        public Rule {
            if (kind == null || op == null) {
                throw new IllegalArgumentException("a fault rule needs a kind and an operation");
            }
            if (fraction < 0 || fraction > 1) {
                throw new IllegalArgumentException("fault fraction " + fraction + " is out of range: valid values are 0..1");
            }
            if (fromOffset < 0 || toOffset < fromOffset) {
                throw new IllegalArgumentException("fault offset range [" + fromOffset + ", " + toOffset + ") is invalid");
            }
        }

        /** Every I/O of {@code op} on a target whose description contains {@code targetContains}. */
        public static Rule always(Kind kind, Op op, String targetContains) {
            return new Rule(kind, op, targetContains, 0, Long.MAX_VALUE, 1.0, -1, 0);
        }

        /** I/Os overlapping the bytes of blocks {@code [firstBlock, firstBlock + n)} of a segment file. */
        public static Rule blocks(Kind kind, Op op, String targetContains, long firstBlock, long n) {
            return new Rule(kind, op, targetContains, firstBlock * 8192, (firstBlock + n) * 8192, 1.0, -1, 0);
        }

        public Rule times(int count) {
            return new Rule(kind, op, targetContains, fromOffset, toOffset, fraction, count, delayMillis);
        }

        public Rule fraction(double f) {
            return new Rule(kind, op, targetContains, fromOffset, toOffset, f, maxCount, delayMillis);
        }

        public Rule delay(long millis) {
            return new Rule(kind, op, targetContains, fromOffset, toOffset, fraction, maxCount, millis);
        }

        @Override
        public String toString() {
            return kind.name().toLowerCase(Locale.ROOT) + " on " + op.name().toLowerCase(Locale.ROOT)
                    + (targetContains == null ? "" : " of '" + targetContains + "'")
                    + (fromOffset == 0 && toOffset == Long.MAX_VALUE ? "" : " bytes [" + fromOffset + ", " + toOffset + ")")
                    + (fraction < 1 ? " for " + fraction * 100 + "%" : "") + (maxCount < 0 ? "" : " x" + maxCount)
                    + (kind == Kind.DELAY ? " " + delayMillis + " ms" : "");
        }
    }

    public FaultPlan {
        rules = List.copyOf(rules);
    }

    /**
     * Parses one rule as ConfigAdmin holds it (PID {@code org.pageio.method.fault}, {@code rules}):
     * {@code KIND [OP] [file=TEXT] [blocks=FIRST[-LAST]] [fraction=F] [times=N] [delay=MS]}, e.g.
     * {@code eio read file=pg_default/16384 blocks=5 times=1}, {@code short_read fraction=0.05},
     * {@code delay read delay=3 fraction=0.2}, {@code reorder}, {@code enospc write}. KIND is one of
     * eio, short_read, enospc, short_write, torn_write, delay, reorder; OP one of read (the default;
     * write for enospc, short_write and torn_write),
     * write, fsync, any. {@code file} matches a substring of the I/O's target (relation, blocks,
     * file name); {@code blocks} the bytes of those blocks of a segment file.
     *
     * @throws IllegalArgumentException one line naming the rule, the bad word and what is valid
     */
    public static Rule parseRule(String text) {
        String[] words = text == null ? new String[0] : text.trim().split("\\s+");
        if (words.length == 0 || words[0].isEmpty()) {
            throw new IllegalArgumentException("empty fault rule: write e.g. 'eio read file=pg_default/16384 blocks=5 times=1'");
        }
        Kind kind;
        try {
            kind = Kind.valueOf(words[0].toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("fault rule '" + text.trim() + "': unknown fault '" + words[0]
                    + "': valid faults are eio, short_read, enospc, short_write, torn_write, delay, reorder");
        }
        Op op = kind == Kind.ENOSPC || kind == Kind.SHORT_WRITE || kind == Kind.TORN_WRITE ? Op.WRITE : Op.READ;
        String file = null;
        long from = 0;
        long to = Long.MAX_VALUE;
        double fraction = 1.0;
        int times = -1;
        long delay = kind == Kind.DELAY ? 1 : 0;
        for (int i = 1; i < words.length; i++) {
            String w = words[i];
            int eq = w.indexOf('=');
            if (eq < 0) {
                try {
                    op = Op.valueOf(w.toUpperCase(Locale.ROOT));
                    continue;
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("fault rule '" + text.trim() + "': unknown word '" + w
                            + "': valid are an operation (read, write, fsync, any) or file=, blocks=, fraction=, times=, delay=");
                }
            }
            String key = w.substring(0, eq);
            String value = w.substring(eq + 1);
            try {
                switch (key) {
                    case "file" -> file = value;
                    case "blocks" -> {
                        int dash = value.indexOf('-');
                        long first = Long.parseLong(dash < 0 ? value : value.substring(0, dash));
                        long last = dash < 0 ? first : Long.parseLong(value.substring(dash + 1));
                        if (first < 0 || last < first) {
                            throw new NumberFormatException();
                        }
                        from = first * 8192;
                        to = (last + 1) * 8192;
                    }
                    case "fraction" -> fraction = Double.parseDouble(value);
                    case "times" -> times = Integer.parseInt(value);
                    case "delay" -> delay = Long.parseLong(value.endsWith("ms") ? value.substring(0, value.length() - 2) : value);
                    default -> throw new IllegalArgumentException("fault rule '" + text.trim() + "': unknown key '" + key
                            + "': valid keys are file, blocks, fraction, times, delay");
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("fault rule '" + text.trim() + "': bad value in '" + w
                        + "': blocks=FIRST or FIRST-LAST (0 or more), fraction=0..1, times=N, delay=MILLISECONDS");
            }
        }
        try {
            return new Rule(kind, op, file, from, to, fraction, times, delay);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("fault rule '" + text.trim() + "': " + e.getMessage());
        }
    }

    /** Parses every rule ({@link #parseRule}); blank entries are skipped. */
    public static FaultPlan parse(String... rules) {
        List<Rule> out = new java.util.ArrayList<>();
        for (String r : rules == null ? new String[0] : rules) {
            if (r != null && !r.isBlank()) {
                out.add(parseRule(r));
            }
        }
        return new FaultPlan(out);
    }

    public static FaultPlan of(Rule... rules) {
        return new FaultPlan(List.of(rules));
    }

    /** No faults: the decorator passes everything through. */
    public static FaultPlan none() {
        return new FaultPlan(List.of());
    }
}
