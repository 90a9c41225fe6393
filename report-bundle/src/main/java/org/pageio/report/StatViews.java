package org.pageio.report;

import java.time.ZoneId;
import java.util.List;
import java.util.Locale;

import org.pageio.api.AioHandleInfo;
import org.pageio.bufmgr.stats.StatIo;

/**
 * The views of the buffer manager's counters as pageio shows them everywhere (the shell's
 * {@code pageio:stat_io} and {@code pageio:aios}, the Web Console page and its JSON):
 * PostgreSQL's {@code pg_stat_io} and {@code pg_aios} columns, in PostgreSQL's order and units.
 */
public final class StatViews {

    private StatViews() {
    }

    public static final String[] STAT_IO_HEADER = {"backend_type", "object", "context", "io_method", "reads", "read_bytes",
        "read_time", "writes", "write_bytes", "write_time", "extends", "extend_bytes", "hits", "evictions", "reuses",
        "fsyncs", "fsync_time", "stats_reset", "bytes_per_read"};

    /**
     * pg_stat_io's columns in its order, the I/O method after the keys and bytes per read at the end
     * (pageio's); times (ns in StatIo) in ms with 3 decimals and {@code stats_reset} as a
     * {@code timestamptz}, as PostgreSQL shows them.
     */
    public static TextTable statIoTable(List<StatIo.Row> rows) {
        TextTable t = new TextTable(STAT_IO_HEADER);
        for (int c = 4; c < STAT_IO_HEADER.length; c++) {
            if (!STAT_IO_HEADER[c].equals("stats_reset")) {
                t.alignRight(c);
            }
        }
        ZoneId zone = ZoneId.systemDefault();
        for (StatIo.Row r : rows) {
            t.row(r.kind(), r.object().label, r.context().label, r.ioMethod(),
                    r.value(StatIo.Column.READS), r.value(StatIo.Column.READ_BYTES), ms(r.value(StatIo.Column.READ_TIME)),
                    r.value(StatIo.Column.WRITES), r.value(StatIo.Column.WRITE_BYTES), ms(r.value(StatIo.Column.WRITE_TIME)),
                    r.value(StatIo.Column.EXTENDS), r.value(StatIo.Column.EXTEND_BYTES),
                    r.value(StatIo.Column.HITS), r.value(StatIo.Column.EVICTIONS), r.value(StatIo.Column.REUSES),
                    r.value(StatIo.Column.FSYNCS), ms(r.value(StatIo.Column.FSYNC_TIME)),
                    StatIo.timestamptz(r.statsReset(), zone),
                    r.value(StatIo.Column.READS) == 0 ? null : Math.round(r.bytesPerRead()));
        }
        return t;
    }

    /** Nanoseconds as milliseconds with 3 decimals (a Double, so JSON keeps it a number). */
    static Double ms(long nanos) {
        return Math.round(nanos / 1000.0) / 1000.0;
    }

    public static final String[] AIOS_HEADER = {"session", "io_id", "io_generation", "state", "operation", "off", "length",
        "target_desc", "raw_result", "result", "f_sync", "f_localmem", "f_buffered"};

    /** pg_aios's columns (session slot in place of pid), sorted by session and handle. */
    public static TextTable aiosTable(List<AioHandleInfo> handles) {
        TextTable t = new TextTable(AIOS_HEADER).alignRight(0, 1, 2, 5, 6, 8);
        handles.stream()
                .sorted(java.util.Comparator.comparingInt(AioHandleInfo::session).thenComparingInt(AioHandleInfo::index))
                .forEach(h -> t.row(h.session(), h.index(), h.generation(), h.state(), h.operation(), h.offset(),
                        h.length(), h.target(), h.rawResult(), h.result().toLowerCase(Locale.ROOT).equals("unknown") ? null
                                : h.result(), h.sync(), h.localMem(), h.buffered()));
        return t;
    }
}
