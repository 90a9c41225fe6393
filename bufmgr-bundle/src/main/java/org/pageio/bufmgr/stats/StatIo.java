package org.pageio.bufmgr.stats;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code pg_stat_io}: I/O counters by session kind × object × context. Cells are
 * {@link LongAdder}s allocated once, so counting allocates nothing and scales across threads. A
 * combined read counts as one read of {@code nblocks × 8 KiB} bytes, charged to the issuer at
 * submission (as PostgreSQL does); a block another session read is a hit for the waiter.
 *
 * <p>Thread-safe. {@link #kind} is called once per session; {@link #add} on the I/O path.
 */
public final class StatIo {

    /** The object an I/O was for. */
    public enum IoObject {
        RELATION("relation"), TEMP_RELATION("temp relation");

        public final String label;

        IoObject(String label) {
            this.label = label;
        }
    }

    /** Why it was done: normal use or through an access-strategy ring. */
    public enum IoContext {
        NORMAL("normal"), BULKREAD("bulkread"), BULKWRITE("bulkwrite"), VACUUM("vacuum");

        public final String label;

        IoContext(String label) {
            this.label = label;
        }
    }

    /** The counters, in {@code pg_stat_io}'s column order. Times are in nanoseconds. */
    public enum Column {
        READS, READ_BYTES, READ_TIME, WRITES, WRITE_BYTES, WRITE_TIME, EXTENDS, EXTEND_BYTES, HITS, EVICTIONS, REUSES,
        FSYNCS, FSYNC_TIME;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Most session kinds tracked (client, io worker, background writer, checkpointer, …). */
    public static final int MAX_KINDS = 16;

    private static final int OBJECTS = IoObject.values().length;
    private static final int CONTEXTS = IoContext.values().length;
    private static final int COLUMNS = Column.values().length;

    private final LongAdder[] cells = new LongAdder[MAX_KINDS * OBJECTS * CONTEXTS * COLUMNS];
    private final List<String> kinds = new CopyOnWriteArrayList<>();
    private volatile long resetAtMillis = System.currentTimeMillis();

    public StatIo() {
        for (int i = 0; i < cells.length; i++) {
            cells[i] = new LongAdder();
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

    /** Where a session's counters start: pass the result to {@link #add}. */
    public static int base(int kind, IoObject object, IoContext context) {
        return ((kind * OBJECTS + object.ordinal()) * CONTEXTS + context.ordinal()) * COLUMNS;
    }

    /** Adds {@code value} to a column of the row at {@code base}. No allocation. */
    public void add(int base, Column column, long value) {
        cells[base + column.ordinal()].add(value);
    }

    public long get(int base, Column column) {
        return cells[base + column.ordinal()].sum();
    }

    /** Zeroes every counter (PostgreSQL's {@code pg_stat_reset_shared('io')}). */
    public void reset() {
        for (LongAdder c : cells) {
            c.reset();
        }
        resetAtMillis = System.currentTimeMillis();
    }

    public long resetAtMillis() {
        return resetAtMillis;
    }

    /** One row of the view. */
    public record Row(String kind, IoObject object, IoContext context, long[] values) {
        public long value(Column c) {
            return values[c.ordinal()];
        }

        /** Average bytes per read, the figure the first article reads off pg_stat_io. */
        public double bytesPerRead() {
            long reads = value(Column.READS);
            return reads == 0 ? 0 : (double) value(Column.READ_BYTES) / reads;
        }
    }

    /** Column {@code c} summed over every row (every kind, object and context). */
    public long total(Column c) {
        long sum = 0;
        for (Row r : rows()) {
            sum += r.value(c);
        }
        return sum;
    }

    /** Rows with any non-zero counter, by kind, object, context. */
    public List<Row> rows() {
        List<Row> rows = new ArrayList<>();
        for (int k = 0; k < kinds.size(); k++) {
            for (IoObject o : IoObject.values()) {
                for (IoContext c : IoContext.values()) {
                    int base = base(k, o, c);
                    long[] v = new long[COLUMNS];
                    boolean any = false;
                    for (int col = 0; col < COLUMNS; col++) {
                        v[col] = cells[base + col].sum();
                        any |= v[col] != 0;
                    }
                    if (any) {
                        rows.add(new Row(kinds.get(k), o, c, v));
                    }
                }
            }
        }
        return rows;
    }
}
