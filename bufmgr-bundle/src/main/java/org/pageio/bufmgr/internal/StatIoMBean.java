package org.pageio.bufmgr.internal;

import java.lang.management.ManagementFactory;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.MethodStatus;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.bufmgr.stats.StatIo.Column;

/**
 * The {@link StatIoMXBean} of one buffer manager, registered with the platform MBeanServer as
 * {@value #NAME} while the buffer manager is active (a second one in the same JVM gets
 * {@code ,id=N}). Reads the live counters at each call; any thread.
 */
final class StatIoMBean implements StatIoMXBean {

    static final String NAME = "org.pageio:type=StatIo";
    private static final System.Logger LOG = System.getLogger("org.pageio.bufmgr");

    private final BufferManager bufmgr;
    private ObjectName name;

    private StatIoMBean(BufferManager bufmgr) {
        this.bufmgr = bufmgr;
    }

    /** Registers one for {@code bufmgr}; returns null (logged) if JMX refuses. */
    static StatIoMBean register(BufferManager bufmgr) {
        StatIoMBean bean = new StatIoMBean(bufmgr);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            for (int id = 1;; id++) {
                ObjectName n = new ObjectName(id == 1 ? NAME : NAME + ",id=" + id);
                try {
                    server.registerMBean(bean, n);
                    bean.name = n;
                    return bean;
                } catch (InstanceAlreadyExistsException e) {
                    if (id > 64) {
                        throw e;
                    }
                }
            }
        } catch (JMException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "stat_io is not available over JMX: registering " + NAME + " failed: " + e);
            return null;
        }
    }

    static void unregister(StatIoMBean bean) {
        if (bean == null || bean.name == null) {
            return;
        }
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(bean.name);
        } catch (JMException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "unregistering " + bean.name + " failed: " + e);
        }
    }

    private StatIo stats() {
        return bufmgr.pool().stats();
    }

    @Override
    public List<Row> getRows() {
        List<Row> rows = new ArrayList<>();
        for (StatIo.Row r : stats().rows()) {
            rows.add(new Row(r.kind(), r.object().label, r.context().label, r.ioMethod(), r.value(Column.READS),
                    r.value(Column.READ_BYTES), ms(r.value(Column.READ_TIME)), r.value(Column.WRITES),
                    r.value(Column.WRITE_BYTES), ms(r.value(Column.WRITE_TIME)), r.value(Column.EXTENDS),
                    r.value(Column.EXTEND_BYTES), r.value(Column.HITS), r.value(Column.EVICTIONS), r.value(Column.REUSES),
                    r.value(Column.FSYNCS), ms(r.value(Column.FSYNC_TIME)),
                    StatIo.timestamptz(r.statsReset(), ZoneId.systemDefault()), r.bytesPerRead()));
        }
        return rows;
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    private long total(Column c) {
        return stats().total(c);
    }

    @Override
    public long getReads() {
        return total(Column.READS);
    }

    @Override
    public long getReadBytes() {
        return total(Column.READ_BYTES);
    }

    @Override
    public long getHits() {
        return total(Column.HITS);
    }

    @Override
    public long getEvictions() {
        return total(Column.EVICTIONS);
    }

    @Override
    public double getBytesPerRead() {
        long reads = getReads();
        return reads == 0 ? 0 : (double) getReadBytes() / reads;
    }

    @Override
    public long getStatsReset() {
        return stats().lastReset().toEpochMilli();
    }

    @Override
    public String getIoMethod() {
        String m = bufmgr.methodStatus().method();
        return m == null ? "none" : m;
    }

    @Override
    public String getIoMethodWanted() {
        return String.valueOf(bufmgr.methodStatus().wanted());
    }

    @Override
    public long getMethodEpoch() {
        return bufmgr.methodStatus().epoch();
    }

    @Override
    public long getMethodSwaps() {
        return bufmgr.methodStatus().swaps();
    }

    @Override
    public String getLastMethodSwap() {
        MethodStatus s = bufmgr.methodStatus();
        return s.lastSwap() == null ? "" : s.lastSwap().toString();
    }

    @Override
    public double getLastSwapPauseMillis() {
        MethodStatus s = bufmgr.methodStatus();
        return s.lastSwap() == null ? 0 : s.lastSwap().pauseMillis();
    }

    @Override
    public void reset() {
        stats().reset();
    }

    @Override
    public void reset(String object, String context) {
        stats().reset(object == null || object.isEmpty() ? null : StatIo.IoObject.of(object),
                context == null || context.isEmpty() ? null : StatIo.IoContext.of(context));
    }
}
