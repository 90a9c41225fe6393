package org.pageio.method.worker;

/**
 * pageio's hand-off policy: what the pool adds to PostgreSQL's worker method, in one place, so that
 * {@link WorkerPool}, {@link IoWorker} and {@link PoolSupervisor} read as method_worker.c with a
 * named call where the policy steps in. PostgreSQL wakes one idle worker whenever anything is
 * queued and lets a waiting backend sleep; the policy
 * <ul>
 *   <li>caps the workers woken for short I/Os at one fewer than the CPUs ({@link CpuCap}): while
 *       that many are awake on page-cache copies, a wake-up is held back;</li>
 *   <li>watches every held-back wake-up from the supervisor ({@link HeldWakeWatch}), so that a
 *       worker counted on and then stalled does not strand the queue: PostgreSQL's wake-up, late by
 *       at most one check;</li>
 *   <li>lets a waiting issuer execute its own queued handle when the pool is behind, and its
 *       newest queued handle while it waits for one a worker holds ({@link IssuerTakeBack});</li>
 *   <li>leaves reads the kernel was advised of to their issuer: their submission wakes nobody, and
 *       the issuer takes them back when it waits ({@link AdvisedReads}).</li>
 * </ul>
 * {@link HandOffStats} counts the hand-off's events, to measure the policy. The setting
 * {@code io_worker_policy} selects it: {@code pageio} (the default, {@link #pageio()}) or
 * {@code postgresql} ({@link #postgresql()}), which switches every part off that can be; the watch
 * stays, as it only repeats PostgreSQL's wake-up for handles left queued.
 *
 * <p>why: docs/performance.md, "The worker pool's hand-off policy". Created once per pool; its
 * switches are volatile fields read once per decision.
 */
final class HandOffPolicy {

    /** {@code io_worker_policy} values. */
    static final String PAGEIO = "pageio";
    static final String POSTGRESQL = "postgresql";

    final HeldWakeWatch watch;
    final CpuCap cpuCap;
    final IssuerTakeBack issuers;
    final AdvisedReads advised;

    HandOffPolicy(WorkerPool pool) {
        this.watch = new HeldWakeWatch(pool);
        this.cpuCap = new CpuCap(pool.queue, pool.workers, watch);
        this.issuers = new IssuerTakeBack(pool);
        this.advised = new AdvisedReads();
    }

    /** Turns the cap, take back, help and advised reads off: PostgreSQL's wake-ups, and issuers that only sleep. */
    void postgresql() {
        cpuCap.cpuCap = 0;
        issuers.takeBackEnabled = false;
        issuers.issuerHelps = false;
        advised.enabled = false;
    }

    /** Turns every part back on at its default: the cap one fewer than the CPUs, take back, help, advised reads. */
    void pageio() {
        cpuCap.busyNanos = CpuCap.BUSY_NANOS;
        cpuCap.cpuCap = CpuCap.DEFAULT_CPU_CAP;
        issuers.takeBackEnabled = true;
        issuers.issuerHelps = true;
        advised.enabled = true;
    }

    /**
     * Applies {@code io_worker_policy}: {@code pageio} or {@code postgresql} (any case).
     *
     * @throws IllegalArgumentException naming the setting and its valid values
     */
    void select(String value) {
        String v = value == null ? "" : value.strip().toLowerCase(java.util.Locale.ROOT);
        switch (v) {
            case PAGEIO -> pageio();
            case POSTGRESQL -> postgresql();
            default -> throw new IllegalArgumentException("io_worker_policy = '" + value
                    + "' is not valid: valid values are pageio, postgresql");
        }
    }

    /** Whether every switchable part is at its default (the cap one fewer than the CPUs, take back, help and advised reads on). */
    boolean isDefault() {
        return cpuCap.cpuCap == CpuCap.DEFAULT_CPU_CAP && cpuCap.busyNanos == CpuCap.BUSY_NANOS
                && issuers.takeBackEnabled && issuers.issuerHelps && advised.enabled;
    }
}
