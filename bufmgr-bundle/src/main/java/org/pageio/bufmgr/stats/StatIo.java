package org.pageio.bufmgr.stats;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code pg_stat_io}: I/O counters by session kind × object × context, and by the I/O method that
 * did the I/O ({@code io_method}, pageio's column). Cells are {@link LongAdder}s allocated once, for
 * every method slot, so counting allocates nothing and scales across threads. A combined read
 * counts as one read of {@code nblocks × 8 KiB} bytes, charged to the issuer at submission (as
 * PostgreSQL does); a block another session read is a hit for the waiter.
 *
 * <p><b>Method slots.</b> A session charges its counters to the method it is bound to when it
 * counts (hits, evictions and extends included, so that one method's rows describe the period it
 * was in force); after a hot swap it counts in the new method's rows, the old ones stay. Slots are
 * given to method names in the order first seen, at most {@link #MAX_METHODS} − 1 of them; any
 * later method counts in the last slot, shown as {@value #OTHER_METHOD} (one WARNING says which).
 * A slot is never taken back, not even by a reset.
 *
 * <p><b>stats_reset</b> is kept per object × context: the construction (the buffer manager's
 * start), or the last {@link #reset} that covered it, to the microsecond.
 *
 * <p>Thread-safe. {@link #kind} is called once per session and {@link #method} once per method a
 * session binds; {@link #add} on the I/O path.
 */
public final class StatIo {

    /** The object an I/O was for. */
    public enum IoObject {
        RELATION("relation"), TEMP_RELATION("temp relation");

        public final String label;

        IoObject(String label) {
            this.label = label;
        }

        /**
         * The object named {@code label} as {@code pg_stat_io} shows it ({@code relation}, {@code temp relation};
         * {@code temp_relation} too, which needs no quotes in a shell).
         *
         * @throws IllegalArgumentException naming the valid labels
         */
        public static IoObject of(String label) {
            for (IoObject o : values()) {
                if (o.label.equalsIgnoreCase(label) || o.name().equalsIgnoreCase(label)) {
                    return o;
                }
            }
            throw new IllegalArgumentException("unknown stat_io object '" + label + "': use "
                    + String.join(" or ", Arrays.stream(values()).map(o -> "'" + o.label + "'").toList()));
        }
    }

    /** Why it was done: normal use or through an access-strategy ring. */
    public enum IoContext {
        NORMAL("normal"), BULKREAD("bulkread"), BULKWRITE("bulkwrite"), VACUUM("vacuum");

        public final String label;

        IoContext(String label) {
            this.label = label;
        }

        /**
         * The context named {@code label} as {@code pg_stat_io} shows it.
         *
         * @throws IllegalArgumentException naming the valid labels
         */
        public static IoContext of(String label) {
            for (IoContext c : values()) {
                if (c.label.equalsIgnoreCase(label)) {
                    return c;
                }
            }
            throw new IllegalArgumentException("unknown stat_io context '" + label + "': use "
                    + String.join(", ", Arrays.stream(values()).map(c -> "'" + c.label + "'").toList()));
        }
    }

    /** The counters, in {@code pg_stat_io}'s column order. Times are in nanoseconds. */
    public enum Column {
        READS, READ_BYTES, READ_TIME, WRITES, WRITE_BYTES, WRITE_TIME, EXTENDS, EXTEND_BYTES, HITS, EVICTIONS, REUSES,
        FSYNCS, FSYNC_TIME;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Most session kinds tracked (client, io worker, background writer, checkpointer, …). */
    public static final int MAX_KINDS = 16;
    /** Method slots: {@code MAX_METHODS - 1} named ones and the shared {@value #OTHER_METHOD}. */
    public static final int MAX_METHODS = 8;
    /** The {@code io_method} of the last slot, shared by every method seen after the slots ran out. */
    public static final String OTHER_METHOD = "other";
    /** The {@code io_method} of counts made while no method was ever bound. */
    public static final String NO_METHOD = "none";

    private static final System.Logger LOG = System.getLogger("org.pageio.bufmgr");
    private static final int OBJECTS = IoObject.values().length;
    private static final int CONTEXTS = IoContext.values().length;
    private static final int COLUMNS = Column.values().length;

    private final LongAdder[] cells = new LongAdder[MAX_METHODS * MAX_KINDS * OBJECTS * CONTEXTS * COLUMNS];
    private final List<String> kinds = new CopyOnWriteArrayList<>();
    /** Method names by slot; only {@link #method} appends (under this). */
    private final List<String> methods = new CopyOnWriteArrayList<>();
    /** stats_reset per object × context, microseconds since the epoch; written under this, read by anyone. */
    private final AtomicLongArray resetMicros = new AtomicLongArray(OBJECTS * CONTEXTS);

    /** Counters at zero, {@code stats_reset} now. */
    public StatIo() {
        for (int i = 0; i < cells.length; i++) {
            cells[i] = new LongAdder();
        }
        long now = micros(now());
        for (int i = 0; i < resetMicros.length(); i++) {
            resetMicros.set(i, now);
        }
    }

    /** The index of a session kind, registering it on first use. */
    public synchronized int kind(String name) {
        int i = kinds.indexOf(name);
        if (i >= 0) {
            return i;
        }
        if (kinds.size() == MAX_KINDS) {
            throw new IllegalStateException("more than " + MAX_KINDS + " session kinds: " + kinds + " + " + name);
        }
        kinds.add(name);
        return kinds.size() - 1;
    }

    /**
     * The slot of the I/O method {@code name} ({@code null}: {@value #NO_METHOD}), giving it the
     * next free one on first use; once the named slots are taken, the {@value #OTHER_METHOD} slot.
     * Call it when a session's method changes, not per I/O.
     */
    public synchronized int method(String name) {
        String n = name == null ? NO_METHOD : name;
        int i = methods.indexOf(n);
        if (i >= 0 && i < MAX_METHODS - 1) {
            return i;
        }
        if (methods.size() < MAX_METHODS - 1) {
            methods.add(n);
            return methods.size() - 1;
        }
        if (methods.size() == MAX_METHODS - 1) {
            LOG.log(System.Logger.Level.WARNING, "stat_io keeps rows for " + (MAX_METHODS - 1) + " I/O methods " + methods
                    + ": io_method " + n + " and any later one count under io_method '" + OTHER_METHOD + "'");
            methods.add(OTHER_METHOD);
        }
        return MAX_METHODS - 1;
    }

    /** Where the counters of a row start: pass the result to {@link #add}. {@code method} from {@link #method}. */
    public static int base(int method, int kind, IoObject object, IoContext context) {
        return (((method * MAX_KINDS + kind) * OBJECTS + object.ordinal()) * CONTEXTS + context.ordinal()) * COLUMNS;
    }

    /** Adds {@code value} to a column of the row at {@code base}. No allocation. */
    public void add(int base, Column column, long value) {
        cells[base + column.ordinal()].add(value);
    }

    public long get(int base, Column column) {
        return cells[base + column.ordinal()].sum();
    }

    /**
     * Zeroes every counter and sets every row's {@code stats_reset} (PostgreSQL's
     * {@code pg_stat_reset_shared('io')}); returns that time.
     */
    public Instant reset() {
        return reset(null, null);
    }

    /**
     * Zeroes the counters of every row of {@code object} and {@code context} (null: any), of every
     * session kind and method, and sets their {@code stats_reset}; returns that time. A count made
     * while it runs may survive it, as in PostgreSQL. pageio's: PostgreSQL resets {@code pg_stat_io}
     * only as a whole.
     */
    public synchronized Instant reset(IoObject object, IoContext context) {
        for (int m = 0; m < MAX_METHODS; m++) {
            for (int k = 0; k < MAX_KINDS; k++) {
                for (IoObject o : IoObject.values()) {
                    for (IoContext c : IoContext.values()) {
                        if ((object == null || o == object) && (context == null || c == context)) {
                            int base = base(m, k, o, c);
                            for (int col = 0; col < COLUMNS; col++) {
                                cells[base + col].reset();
                            }
                        }
                    }
                }
            }
        }
        Instant at = now();
        for (IoObject o : IoObject.values()) {
            for (IoContext c : IoContext.values()) {
                if ((object == null || o == object) && (context == null || c == context)) {
                    resetMicros.set(o.ordinal() * CONTEXTS + c.ordinal(), micros(at));
                }
            }
        }
        return at;
    }

    /** When the counters of {@code object} × {@code context} were last reset (at first: construction). */
    public Instant statsReset(IoObject object, IoContext context) {
        long us = resetMicros.get(object.ordinal() * CONTEXTS + context.ordinal());
        return Instant.EPOCH.plus(us, ChronoUnit.MICROS);
    }

    /** The most recent reset of any row (at first: construction). */
    public Instant lastReset() {
        long max = Long.MIN_VALUE;
        for (int i = 0; i < resetMicros.length(); i++) {
            max = Math.max(max, resetMicros.get(i));
        }
        return Instant.EPOCH.plus(max, ChronoUnit.MICROS);
    }

    /** The method names by slot, in the order first seen ({@value #OTHER_METHOD} last once the slots ran out). */
    public List<String> methods() {
        return List.copyOf(methods);
    }

    private static Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.MICROS); // PostgreSQL's timestamptz resolution
    }

    private static long micros(Instant t) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, t);
    }

    /**
     * {@code t} as PostgreSQL prints a {@code timestamptz} with {@code DateStyle = ISO}:
     * {@code 2026-05-01 14:03:07.120431+02}, the fraction without trailing zeros (none when whole
     * seconds), the offset as {@code ±HH}, with {@code :MM} (and {@code :SS}) only when not zero.
     */
    public static String timestamptz(Instant t, ZoneId zone) {
        ZonedDateTime z = t.atZone(zone);
        StringBuilder sb = new StringBuilder(32);
        sb.append(String.format(Locale.ROOT, "%04d-%02d-%02d %02d:%02d:%02d", z.getYear(), z.getMonthValue(),
                z.getDayOfMonth(), z.getHour(), z.getMinute(), z.getSecond()));
        int micros = z.getNano() / 1000;
        if (micros != 0) {
            String f = String.format(Locale.ROOT, "%06d", micros);
            int end = f.length();
            while (f.charAt(end - 1) == '0') {
                end--;
            }
            sb.append('.').append(f, 0, end);
        }
        int off = z.getOffset().getTotalSeconds();
        sb.append(off < 0 ? '-' : '+');
        off = Math.abs(off);
        sb.append(String.format(Locale.ROOT, "%02d", off / 3600));
        if (off % 3600 != 0) {
            sb.append(String.format(Locale.ROOT, ":%02d", off % 3600 / 60));
            if (off % 60 != 0) {
                sb.append(String.format(Locale.ROOT, ":%02d", off % 60));
            }
        }
        return sb.toString();
    }

    /** One row of the view: its keys, the counters in {@link Column} order, and when they were last reset. */
    public record Row(String kind, IoObject object, IoContext context, String ioMethod, long[] values, Instant statsReset) {
        public long value(Column c) {
            return values[c.ordinal()];
        }

        /** Average bytes per read, the figure a reader of pg_stat_io divides out to see combined reads. */
        public double bytesPerRead() {
            long reads = value(Column.READS);
            return reads == 0 ? 0 : (double) value(Column.READ_BYTES) / reads;
        }
    }

    /** Column {@code c} summed over every row (every kind, object, context and method). */
    public long total(Column c) {
        long sum = 0;
        for (Row r : rows()) {
            sum += r.value(c);
        }
        return sum;
    }

    /** Rows with any non-zero counter, by kind, object, context, then method in the order first seen. */
    public List<Row> rows() {
        List<Row> rows = new ArrayList<>();
        List<String> ms = methods;
        for (int k = 0; k < kinds.size(); k++) {
            for (IoObject o : IoObject.values()) {
                for (IoContext c : IoContext.values()) {
                    Instant reset = statsReset(o, c);
                    for (int m = 0; m < ms.size(); m++) {
                        int base = base(m, k, o, c);
                        long[] v = new long[COLUMNS];
                        boolean any = false;
                        for (int col = 0; col < COLUMNS; col++) {
                            v[col] = cells[base + col].sum();
                            any |= v[col] != 0;
                        }
                        if (any) {
                            rows.add(new Row(kinds.get(k), o, c, ms.get(m), v, reset));
                        }
                    }
                }
            }
        }
        return rows;
    }
}
