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
                    + (fraction < 1 ? " for " + fraction * 100 + "%" : "") + (maxCount < 0 ? "" : " x" + maxCount);
        }
    }

    public FaultPlan {
        rules = List.copyOf(rules);
    }

    public static FaultPlan of(Rule... rules) {
        return new FaultPlan(List.of(rules));
    }

    /** No faults: the decorator passes everything through. */
    public static FaultPlan none() {
        return new FaultPlan(List.of());
    }
}
