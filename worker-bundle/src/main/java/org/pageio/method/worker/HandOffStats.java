package org.pageio.method.worker;

import java.util.Locale;

/**
 * Hand-off counters of the pool since activation, for measuring where the cost of handing an I/O
 * to a worker goes. The event counters count only when the pool is built with its counting
 * constant on ({@code PoolCounters.COUNT_HANDOFFS}, off by default; {@code counting}); the I/O
 * counts always. Read without locks; immutable.
 *
 * @param counting        whether the event counters below were on
 * @param workerIos       I/Os executed by workers
 * @param takenBack       I/Os the issuer took back from the queue and executed itself
 * @param inline          I/Os the issuer executed at submission (queue full or lock busy)
 * @param batches         submit calls that reached the queue
 * @param submitWakes     workers unparked by a submitter (at most one per batch)
 * @param chainWakes      workers unparked by a peer that dequeued and saw more queued
 * @param workerParks     times a worker found the queue empty and went to sleep
 * @param wakeupsForWork  times a worker woke up chosen by a waker (its idle bit cleared)
 * @param futileWakeups   of those, the ones after which the worker found the queue empty
 * @param waits           waits on a queued or running handle that reached the pool's waiter
 *                        (not taken back)
 * @param waiterSleeps    parks of those waiters (one per sleep, re-checks included)
 * @param waiterUnparks   waiters unparked by the thread that completed their handle
 * @param waiterKicks     idle workers woken by an issuer about to wait on its lone queued handle
 * @param supervisorWakes idle workers woken by the supervisor's CPU-cap check (the CPU cap)
 */
public record HandOffStats(boolean counting, long workerIos, long takenBack, long inline, long batches,
        long submitWakes, long chainWakes, long workerParks, long wakeupsForWork, long futileWakeups, long waits,
        long waiterSleeps, long waiterUnparks, long waiterKicks, long supervisorWakes) {

    /** The difference {@code this - before}: the events of an interval. */
    public HandOffStats minus(HandOffStats before) {
        return new HandOffStats(counting, workerIos - before.workerIos, takenBack - before.takenBack,
                inline - before.inline, batches - before.batches, submitWakes - before.submitWakes,
                chainWakes - before.chainWakes, workerParks - before.workerParks,
                wakeupsForWork - before.wakeupsForWork, futileWakeups - before.futileWakeups, waits - before.waits,
                waiterSleeps - before.waiterSleeps, waiterUnparks - before.waiterUnparks,
                waiterKicks - before.waiterKicks, supervisorWakes - before.supervisorWakes);
    }

    /** Every I/O the pool saw: run by workers, taken back, or run inline. */
    public long ios() {
        return workerIos + takenBack + inline;
    }

    /** One line, the events per I/O. */
    public String perIo() {
        double n = Math.max(1, ios());
        String io = String.format(Locale.ROOT, "%d I/Os: %.1f%% in workers, %.1f%% taken back, %.1f%% inline",
                ios(), 100.0 * workerIos / n, 100.0 * takenBack / n, 100.0 * inline / n);
        if (!counting) {
            return io + " (event counters off)";
        }
        return io + String.format(Locale.ROOT, "; per I/O: batches %.3f, submit wakes %.3f, chain wakes %.3f,"
                + " worker parks %.3f, wake-ups for work %.3f (futile %.3f), waits %.3f, waiter sleeps %.3f,"
                + " waiter unparks %.3f, waiter kicks %.3f, supervisor wakes %.3f", batches / n, submitWakes / n, chainWakes / n, workerParks / n,
                wakeupsForWork / n, futileWakeups / n, waits / n, waiterSleeps / n, waiterUnparks / n,
                waiterKicks / n, supervisorWakes / n);
    }
}
