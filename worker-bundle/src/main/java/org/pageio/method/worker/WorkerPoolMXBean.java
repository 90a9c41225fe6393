package org.pageio.method.worker;

/**
 * The worker pool over JMX ({@value WorkerPoolMBean#NAME}), as JConsole, VisualVM and the
 * console's {@code /metrics} read it: the pool's size and queue now, and its cumulative counts
 * since activation ({@link WorkerPoolStats}). Registered while the {@code worker} component is
 * active, whether or not the buffer manager uses it.
 */
public interface WorkerPoolMXBean {

    /** Workers registered now (launched and not exited). */
    int getWorkers();

    /** Of those, the ones sleeping with nothing to do. */
    int getIdleWorkers();

    /** The most workers registered at once since activation. */
    int getPeakWorkers();

    /** {@code io_min_workers} in force. */
    int getMinWorkers();

    /** {@code io_max_workers} in force. */
    int getMaxWorkers();

    /** Handles waiting in the submission queue now. */
    int getQueueDepth();

    /** Handles the submission queue holds at most. */
    int getQueueCapacity();

    /** Workers started since activation (at start, for growth, as replacements). */
    long getLaunches();

    /** Workers that exited because the pool shrank. */
    long getRetirements();

    /** Workers that died of an unexpected error (each one replaced). */
    long getDeaths();

    /** I/Os executed by the workers. */
    long getWorkerIos();

    /** I/Os the issuer executed itself because the queue was full. */
    long getInlineQueueFull();

    /** I/Os the issuer executed itself because the queue lock was busy. */
    long getInlineContended();

    /** I/Os the issuer took back from the queue and executed itself. */
    long getTakenBack();
}
