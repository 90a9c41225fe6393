package org.pageio.method.worker;

/**
 * A snapshot of the pool's gauges, for the console: read without locks, so the numbers are each
 * current but not mutually consistent. Immutable; any thread.
 *
 * @param workersAlive       workers registered now (launched and not exited)
 * @param workersIdle        of those, the ones sleeping with nothing to do
 * @param peakWorkers        the most workers ever registered at once
 * @param queueDepth         handles waiting in the submission queue
 * @param launches           workers started since activation (at start, for growth, as replacements)
 * @param retirements        workers that exited because the pool shrank (idle timeout, or a lowered
 *                           {@code io_max_workers})
 * @param deaths             workers that died of an unexpected error (each one replaced)
 * @param inlineQueueFull    I/Os the issuer executed itself because the queue was full
 * @param inlineContended    I/Os the issuer executed itself because the queue lock was busy
 * @param takenBack          I/Os the issuer took back from the queue and executed itself because it
 *                           had to wait for them and every worker was busy
 * @param iosPerWorker       I/Os executed by worker {@code i} ({@code io worker i}), cumulative over
 *                           every worker that held that id; 32 entries
 */
public record WorkerPoolStats(int workersAlive, int workersIdle, int peakWorkers, int queueDepth, long launches,
        long retirements, long deaths, long inlineQueueFull, long inlineContended, long takenBack, long[] iosPerWorker) {

    public WorkerPoolStats {
        iosPerWorker = iosPerWorker.clone();
    }

    /** A copy: the record stays immutable. */
    @Override
    public long[] iosPerWorker() {
        return iosPerWorker.clone();
    }

    /** I/Os executed by all workers. */
    public long workerIos() {
        long sum = 0;
        for (long n : iosPerWorker) {
            sum += n;
        }
        return sum;
    }

    @Override
    public String toString() {
        StringBuilder per = new StringBuilder();
        for (int i = 0; i < iosPerWorker.length; i++) {
            if (iosPerWorker[i] != 0) {
                per.append(per.isEmpty() ? "" : " ").append(i).append(':').append(iosPerWorker[i]);
            }
        }
        return "WorkerPoolStats[alive " + workersAlive + ", idle " + workersIdle + ", peak " + peakWorkers
                + ", queue " + queueDepth + ", launches " + launches + ", retirements " + retirements + ", deaths "
                + deaths + ", inline (queue full) " + inlineQueueFull + ", inline (lock busy) " + inlineContended
                + ", taken back " + takenBack
                + ", I/Os per worker {" + per + "}]";
    }
}
