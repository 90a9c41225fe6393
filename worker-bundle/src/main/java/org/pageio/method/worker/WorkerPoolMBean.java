package org.pageio.method.worker;

import java.lang.management.ManagementFactory;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * The {@link WorkerPoolMXBean} of the {@code worker} component, registered with the platform
 * MBeanServer as {@value #NAME} while the component is active (one per JVM). Reads the live
 * gauges at each call ({@link WorkerIoMethod#stats()}); any thread.
 */
final class WorkerPoolMBean implements WorkerPoolMXBean {

    static final String NAME = "org.pageio:type=WorkerPool";
    private static final System.Logger LOG = System.getLogger(WorkerIoMethod.PID);

    private final WorkerIoMethod method;
    private ObjectName name;

    private WorkerPoolMBean(WorkerIoMethod method) {
        this.method = method;
    }

    /**
     * Registers one for {@code method}; returns null (logged) if JMX refuses, or when another
     * worker component of this JVM holds the name (another framework): that one stays visible.
     */
    static WorkerPoolMBean register(WorkerIoMethod method) {
        WorkerPoolMBean bean = new WorkerPoolMBean(method);
        try {
            bean.name = new ObjectName(NAME);
            ManagementFactory.getPlatformMBeanServer().registerMBean(bean, bean.name);
            return bean;
        } catch (JMException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "the worker pool is not available over JMX: registering " + NAME
                    + " failed: " + e);
            return null;
        }
    }

    static void unregister(WorkerPoolMBean bean) {
        if (bean == null || bean.name == null) {
            return;
        }
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(bean.name);
        } catch (JMException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "unregistering " + bean.name + " failed: " + e);
        }
    }

    @Override
    public int getWorkers() {
        return method.stats().workersAlive();
    }

    @Override
    public int getIdleWorkers() {
        return method.stats().workersIdle();
    }

    @Override
    public int getPeakWorkers() {
        return method.stats().peakWorkers();
    }

    @Override
    public int getMinWorkers() {
        return method.settings().minWorkers();
    }

    @Override
    public int getMaxWorkers() {
        return method.settings().maxWorkers();
    }

    @Override
    public int getQueueDepth() {
        return method.stats().queueDepth();
    }

    @Override
    public int getQueueCapacity() {
        return SubmissionQueue.QUEUE_SIZE - 1;
    }

    @Override
    public long getLaunches() {
        return method.stats().launches();
    }

    @Override
    public long getRetirements() {
        return method.stats().retirements();
    }

    @Override
    public long getDeaths() {
        return method.stats().deaths();
    }

    @Override
    public long getWorkerIos() {
        return method.stats().workerIos();
    }

    @Override
    public long getInlineQueueFull() {
        return method.stats().inlineQueueFull();
    }

    @Override
    public long getInlineContended() {
        return method.stats().inlineContended();
    }

    @Override
    public long getTakenBack() {
        return method.stats().takenBack();
    }
}
