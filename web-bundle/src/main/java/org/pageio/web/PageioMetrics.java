package org.pageio.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.api.MethodSwap;
import org.pageio.bufmgr.BufferCacheSummary;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.ReadStreamTotals;
import org.pageio.bufmgr.MethodStatus;
import org.pageio.bufmgr.stats.StatIo;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * What {@code /metrics} shows, as the snapshots of Prometheus' Java client ({@link MetricSnapshots}:
 * {@link CounterSnapshot}s and {@link GaugeSnapshot}s with {@link Labels}), written in the text format
 * 0.0.4 by the client's {@link PrometheusTextFormatWriter}: every
 * {@code stat_io} counter by {@code backend_type}, {@code object}, {@code context} and
 * {@code io_method} (PostgreSQL's {@code pg_stat_io} names, times in seconds), the I/O handles in
 * use by state (what {@code pageio:aios} lists), the buffer pool ({@code pg_buffercache_summary()}),
 * checksum failures, the read streams' look-ahead distance and depth (sums over ended streams), the method in force and its swaps, and, while the {@code worker} method's
 * component is active, its pool ({@code org.pageio:type=WorkerPool} over JMX).
 *
 * <p>Everything is read when scraped, from numbers the buffer manager and the worker pool keep
 * anyway: nothing is counted per I/O for this view. The names are given whole, a counter's with its
 * {@code _total} (the writer adds none then); the library checks the names, labels and values,
 * refuses a family or series twice, escapes, orders the families by name and the samples by their
 * labels, and writes every value as a double ({@code 1.0}). Any thread.
 */
final class PageioMetrics {

    /** The worker method's MXBean (worker-bundle's {@code WorkerPoolMBean}). */
    static final String WORKER_POOL = "org.pageio:type=WorkerPool";

    /** The text format 0.0.4, without {@code _created} series. Stateless: shared by every scrape. */
    private static final PrometheusTextFormatWriter WRITER = PrometheusTextFormatWriter.create();

    /** The {@code Content-Type} of a scrape: the writer's ({@code text/plain; version=0.0.4; charset=utf-8}). */
    static final String CONTENT_TYPE = WRITER.getContentType();

    /** A metric family's type. */
    enum Type { COUNTER, GAUGE }

    private PageioMetrics() {
    }

    /** The exposition for buffer manager {@code b} (null: not running) and the platform MBeanServer. */
    static String scrape(BufferManager b) {
        return scrape(b, ManagementFactory.getPlatformMBeanServer());
    }

    static String scrape(BufferManager b, MBeanServer server) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
        try {
            WRITER.write(out, snapshots(b, server));
        } catch (IOException e) {
            throw new UncheckedIOException("writing the metrics to memory failed: " + e, e); // a byte array does not fail
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** The families for buffer manager {@code b} (null: not running) and the worker pool in {@code server}. */
    static MetricSnapshots snapshots(BufferManager b, MBeanServer server) {
        Families t = new Families();
        t.family("pageio_up", Type.GAUGE, "1 while the buffer manager runs, else 0 (it restarts on a setting change"
                + " or refused to start; see pageio:settings)").sample(b == null ? 0 : 1);
        if (b != null) {
            BufferPool pool = b.pool();
            statIo(t, pool.stats().rows());
            aios(t, pool.aio());
            buffers(t, pool);
            streams(t, pool.streamTotals());
            method(t, b.methodStatus());
        }
        workerPool(t, server);
        return t.build();
    }

    /**
     * The families of one scrape, built as their samples come: {@link #family} starts one, {@link Family#sample}
     * adds to it. One scrape, one thread.
     */
    static final class Families {
        private final List<Family> families = new ArrayList<>();

        Family family(String name, Type type, String help) {
            Family f = new Family(name, type, help);
            families.add(f);
            return f;
        }

        /** The library's snapshots; its checks (names, labels, duplicates) throw IllegalArgumentException. */
        MetricSnapshots build() {
            List<MetricSnapshot> out = new ArrayList<>(families.size());
            for (Family f : families) {
                out.add(f.build());
            }
            return new MetricSnapshots(out);
        }
    }

    /** One family and its samples. */
    static final class Family {
        private final Type type;
        private final CounterSnapshot.Builder counter;
        private final GaugeSnapshot.Builder gauge;

        private Family(String name, Type type, String help) {
            this.type = type;
            this.counter = type == Type.COUNTER ? CounterSnapshot.builder().name(name).help(help) : null;
            this.gauge = type == Type.GAUGE ? GaugeSnapshot.builder().name(name).help(help) : null;
        }

        /** A sample with labels given as name, value, name, value, … */
        Family sample(double value, String... labels) {
            Labels l = Labels.of(labels);
            if (type == Type.COUNTER) {
                counter.dataPoint(CounterDataPointSnapshot.builder().value(value).labels(l).build());
            } else {
                gauge.dataPoint(GaugeDataPointSnapshot.builder().value(value).labels(l).build());
            }
            return this;
        }

        private MetricSnapshot build() {
            return type == Type.COUNTER ? counter.build() : gauge.build();
        }
    }

    /** One counter family per pg_stat_io column, the samples of every row; then when each row was reset. */
    static void statIo(Families t, List<StatIo.Row> rows) {
        for (StatIo.Column c : StatIo.Column.values()) {
            boolean time = c.label().endsWith("_time");
            Family f = t.family("pageio_stat_io_" + c.label() + (time ? "_seconds" : "") + "_total", Type.COUNTER,
                    statIoHelp(c));
            for (StatIo.Row r : rows) {
                long v = r.value(c);
                f.sample(time ? v / 1e9 : v, statIoLabels(r));
            }
        }
        Family reset = t.family("pageio_stat_io_stats_reset_timestamp_seconds", Type.GAUGE,
                "When the row's counters were last reset (pg_stat_io.stats_reset), seconds since the epoch");
        for (StatIo.Row r : rows) {
            reset.sample(r.statsReset().toEpochMilli() / 1e3, statIoLabels(r));
        }
    }

    private static String[] statIoLabels(StatIo.Row r) {
        return new String[] {"backend_type", r.kind(), "object", r.object().label, "context", r.context().label,
            "io_method", r.ioMethod()};
    }

    private static String statIoHelp(StatIo.Column c) {
        return switch (c) {
            case READS -> "Read operations, each of one or more blocks combined (pg_stat_io.reads)";
            case READ_BYTES -> "Bytes read (pg_stat_io.read_bytes)";
            case READ_TIME -> "Time spent waiting for reads, in seconds (pg_stat_io.read_time)";
            case WRITES -> "Write operations (pg_stat_io.writes)";
            case WRITE_BYTES -> "Bytes written (pg_stat_io.write_bytes)";
            case WRITE_TIME -> "Time spent in writes, in seconds (pg_stat_io.write_time)";
            case EXTENDS -> "Relation extend operations (pg_stat_io.extends)";
            case EXTEND_BYTES -> "Bytes added by extends (pg_stat_io.extend_bytes)";
            case HITS -> "Blocks found in shared buffers (pg_stat_io.hits)";
            case EVICTIONS -> "Buffers evicted to hold another block (pg_stat_io.evictions)";
            case REUSES -> "Ring buffers reused (pg_stat_io.reuses)";
            case FSYNCS -> "fsync calls (pg_stat_io.fsyncs)";
            case FSYNC_TIME -> "Time spent in fsync, in seconds (pg_stat_io.fsync_time)";
        };
    }

    /** Handles in use by state: a count of every handle's state word, no row built (cheaper than pg_aios). */
    static void aios(Families t, AioContext aio) {
        int[] byState = new int[IoHandle.COMPLETED_LOCAL + 1];
        int n = aio.handleCount();
        for (int i = 0; i < n; i++) {
            int s = aio.handle(i).state();
            if (s > IoHandle.IDLE && s < byState.length) {
                byState[s]++;
            }
        }
        Family handles = t.family("pageio_aio_handles", Type.GAUGE, "I/O handles in use by state, as pageio:aios (pg_aios)"
                + " lists them");
        for (int s = IoHandle.HANDED_OUT; s < byState.length; s++) {
            handles.sample(byState[s], "state", IoHandle.stateName(s));
        }
        t.family("pageio_aio_handle_slots", Type.GAUGE, "I/O handles there are, in use or idle").sample(n);
    }

    static void buffers(Families t, BufferPool pool) {
        BufferCacheSummary s = pool.summary();
        t.family("pageio_shared_buffers", Type.GAUGE, "Buffers in the pool (shared_buffers, 8 kB each)").sample(pool.nbuffers());
        t.family("pageio_buffers_used", Type.GAUGE, "Buffers holding a valid page (pg_buffercache_summary)").sample(s.used());
        t.family("pageio_buffers_unused", Type.GAUGE, "Buffers holding no valid page (pg_buffercache_summary)")
                .sample(s.unused());
        t.family("pageio_buffers_dirty", Type.GAUGE, "Buffers not written since changed (pg_buffercache_summary)")
                .sample(s.dirty());
        t.family("pageio_buffers_pinned", Type.GAUGE, "Buffers pinned, reads in flight included (pg_buffercache_summary)")
                .sample(s.pinned());
        t.family("pageio_buffers_usagecount_avg", Type.GAUGE, "Average usage count of the used buffers"
                + " (pg_buffercache_summary)").sample(s.usageCountAvg());
        t.family("pageio_checksum_failures_total", Type.COUNTER, "Pages read whose checksum did not match"
                + " (pg_stat_database.checksum_failures)").sample(pool.checksumFailures());
    }

    /**
     * The read streams that ended, as sums: {@code rate(…_distance_sum_total) / rate(…_buffers_total)}
     * is the mean look-ahead distance, {@code rate(…_ios_in_progress_sum_total) /
     * rate(…_ios_total)} the mean reads in flight, of the streams that ended in the interval.
     */
    static void streams(Families t, ReadStreamTotals r) {
        t.family("pageio_read_streams_total", Type.COUNTER, "Read streams that ended (their counts are in the"
                + " pageio_read_stream_* sums)").sample(r.streams());
        t.family("pageio_read_stream_buffers_total", Type.COUNTER, "Buffers the ended read streams returned")
                .sample(r.buffers());
        t.family("pageio_read_stream_distance_sum_total", Type.COUNTER, "Look-ahead distance (buffers) at each buffer"
                + " returned, summed; divided by pageio_read_stream_buffers_total, the mean distance").sample(r.distanceSum());
        t.family("pageio_read_stream_ios_total", Type.COUNTER, "Reads the ended read streams started").sample(r.ios());
        t.family("pageio_read_stream_ios_in_progress_sum_total", Type.COUNTER, "Reads in flight once each read started,"
                + " summed; divided by pageio_read_stream_ios_total, the mean depth").sample(r.inProgressSum());
        t.family("pageio_read_stream_waits_total", Type.COUNTER, "Times a read stream's consumer blocked for a read")
                .sample(r.waits());
        t.family("pageio_read_stream_wait_seconds_total", Type.COUNTER, "Time read streams' consumers blocked for reads")
                .sample(r.waitNanos() / 1e9);
    }

    static void method(Families t, MethodStatus m) {
        t.family("pageio_io_method_info", Type.GAUGE, "The I/O method reads go to (none while they wait for one) and what"
                + " io_method asks for").sample(1, "io_method", m.method() == null ? "none" : m.method(),
                        "wanted", String.valueOf(m.wanted()));
        t.family("pageio_io_method_swaps_total", Type.COUNTER, "Hot swaps of io_method since the buffer manager started")
                .sample(m.swaps());
        t.family("pageio_io_method_swap_failures_total", Type.COUNTER, "Swaps of io_method that failed since the buffer"
                + " manager started").sample(m.failures());
        MethodSwap last = m.lastSwap();
        t.family("pageio_io_method_swap_pause_seconds", Type.GAUGE, "How long the last swap closed the method gate"
                + " (no I/O could start), 0 before the first").sample(last == null ? 0 : last.pauseNanos() / 1e9);
    }

    /** A worker pool MXBean attribute and the metric family it becomes. */
    private record WorkerMetric(String attribute, String name, Type type, String help) {}

    private static final List<WorkerMetric> WORKER = List.of(
            new WorkerMetric("Workers", "pageio_io_workers", Type.GAUGE, "I/O workers running (io_method=worker)"),
            new WorkerMetric("IdleWorkers", "pageio_io_workers_idle", Type.GAUGE, "I/O workers sleeping with nothing to do"),
            new WorkerMetric("MinWorkers", "pageio_io_workers_min", Type.GAUGE, "io_min_workers in force"),
            new WorkerMetric("MaxWorkers", "pageio_io_workers_max", Type.GAUGE, "io_max_workers in force"),
            new WorkerMetric("QueueDepth", "pageio_io_worker_queue_depth", Type.GAUGE,
                    "I/Os waiting in the workers' submission queue"),
            new WorkerMetric("QueueCapacity", "pageio_io_worker_queue_capacity", Type.GAUGE,
                    "I/Os the submission queue holds at most"),
            new WorkerMetric("Launches", "pageio_io_worker_launches_total", Type.COUNTER,
                    "I/O workers started (at start, to grow, as replacements)"),
            new WorkerMetric("Retirements", "pageio_io_worker_retirements_total", Type.COUNTER,
                    "I/O workers that exited as the pool shrank"),
            new WorkerMetric("Deaths", "pageio_io_worker_deaths_total", Type.COUNTER,
                    "I/O workers that died of an unexpected error"),
            new WorkerMetric("WorkerIos", "pageio_io_worker_ios_total", Type.COUNTER, "I/Os the workers executed"));

    /** I/Os the issuer ran itself: MXBean attribute, the {@code reason} label's value. */
    private static final String[][] ISSUER = {
        {"InlineQueueFull", "queue_full"}, {"InlineContended", "lock_busy"}, {"TakenBack", "taken_back"},
    };

    /** The worker method's pool, when its component is active; nothing otherwise. */
    static void workerPool(Families t, MBeanServer server) {
        List<String> names = new ArrayList<>();
        WORKER.forEach(w -> names.add(w.attribute()));
        for (String[] i : ISSUER) {
            names.add(i[0]);
        }
        AttributeList values;
        try {
            values = server.getAttributes(new ObjectName(WORKER_POOL), names.toArray(String[]::new));
        } catch (InstanceNotFoundException e) {
            return; // the worker method is not there
        } catch (JMException e) {
            throw new IllegalStateException("reading " + WORKER_POOL + " failed: " + e, e);
        }
        Map<String, Number> byName = new HashMap<>();
        for (Attribute a : values.asList()) {
            if (a.getValue() instanceof Number v) {
                byName.put(a.getName(), v);
            }
        }
        for (WorkerMetric w : WORKER) {
            Number v = byName.get(w.attribute());
            if (v != null) {
                t.family(w.name(), w.type(), w.help()).sample(v.doubleValue());
            }
        }
        Family issuer = t.family("pageio_io_worker_issuer_ios_total", Type.COUNTER, "I/Os of io_method=worker that the"
                + " issuing thread executed itself, by why: the queue was full, its lock was busy, or the issuer took its"
                + " I/O back");
        for (String[] i : ISSUER) {
            Number v = byName.get(i[0]);
            if (v != null) {
                issuer.sample(v.doubleValue(), "reason", i[1]);
            }
        }
    }
}
