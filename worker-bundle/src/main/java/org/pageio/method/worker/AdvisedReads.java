package org.pageio.method.worker;

import org.pageio.api.IoHandle;

/**
 * Part of {@link HandOffPolicy}: <b>advised reads wait for their issuer</b>. A read whose issuer
 * gave the kernel {@code WILLNEED} advice before starting it ({@link IoHandle#FLAG_ADVISED}: a
 * random read stream's advice, the read stream's {@code ThreadPoolAdvice} policy) is already on its
 * way to the page cache; what is left is a copy. A worker woken for it would mostly block in
 * {@code preadv} until the read the advice started completes, and wake again: two context switches
 * for a copy, on the CPUs the scan needs. So
 * <ul>
 *   <li>a submission whose handles are all advised wakes no worker ({@link #wakesNobody}); the
 *       held-wake watch is told, as for a wake-up the CPU cap holds back, so that a handle nobody
 *       comes for is still run by a worker within {@code HELD_CHECK_NANOS};</li>
 *   <li>its issuer, when it waits for an advised handle still queued, takes it back and executes it
 *       itself, however short the queue and whether or not a worker is idle
 *       ({@link #takesBack}); by then the advice has usually brought the pages in.</li>
 * </ul>
 * Workers awake anyway (woken for other handles, by the watch, or by a peer's chain) still take
 * advised handles in queue order. Other reads, writes and syncs are handed off as before.
 *
 * <p>why: docs/performance.md, "The default method on random reads". One object per pool;
 * {@link #enabled} is volatile, read once per decision; the rest is pure.
 */
final class AdvisedReads {

    /** Whether the part is on ({@code io_worker_policy = pageio}). Volatile. */
    volatile boolean enabled = true;

    /** Whether a submission of {@code handles[0..count)} wakes no worker: every one is advised. */
    boolean wakesNobody(IoHandle[] handles, int count) {
        if (!enabled || count == 0) {
            return false;
        }
        for (int i = 0; i < count; i++) {
            if ((handles[i].flags() & IoHandle.FLAG_ADVISED) == 0) {
                return false;
            }
        }
        return true;
    }

    /** Whether a waiting issuer takes back {@code h} whenever it is still queued: it is advised. */
    boolean takesBack(IoHandle h) {
        return enabled && (h.flags() & IoHandle.FLAG_ADVISED) != 0;
    }
}
