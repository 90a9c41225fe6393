package org.pageio.method.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link HandOffPolicy}'s CPU cap, decided on a pool that is not started: workers registered by
 * hand, their I/O times set, the queue lock taken as the pool takes it. The cap's effect on a
 * running pool, the held-wake watch and issuers that take back and help are pinned by
 * {@code WorkerPoolTest}.
 */
class HandOffPolicyTest {

    final WorkerPool pool = new WorkerPool(WorkerSettings.of(1, 4, 60_000, 100));
    final HandOffPolicy policy = pool.handOff;

    /** Registers worker {@code id}, awake (not idle), inside an I/O since {@code busySince} with average {@code avg}. */
    IoWorker awake(int id, long busySince, long avg) {
        IoWorker w = new IoWorker(pool, id);
        w.busySince = busySince;
        w.ioNanosAvg = avg;
        pool.workers.register(w);
        return w;
    }

    IoWorker idle(int id) {
        IoWorker w = new IoWorker(pool, id);
        pool.workers.register(w);
        pool.queue.lock();
        try {
            pool.queue.setIdleLocked(w.bit);
        } finally {
            pool.queue.unlock();
        }
        return w;
    }

    boolean holds(long now) {
        pool.queue.lock();
        try {
            return policy.cpuCap.holdsWakeLocked(now);
        } finally {
            pool.queue.unlock();
        }
    }

    @Test
    void theDefaultCapIsOneFewerThanTheCpusAndEverythingIsOn() {
        assertTrue(policy.isDefault());
        assertEquals(Math.max(1, Runtime.getRuntime().availableProcessors() - 1), policy.cpuCap.cpuCap);
        assertEquals(TimeUnit.MICROSECONDS.toNanos(50), CpuCap.BUSY_NANOS);
        assertTrue(policy.issuers.takeBackEnabled);
        assertTrue(policy.issuers.issuerHelps);
    }

    @Test
    void postgresqlTurnsTheCapTakeBackAndHelpOff() {
        policy.postgresql();
        assertFalse(policy.isDefault());
        assertEquals(0, policy.cpuCap.cpuCap);
        assertFalse(policy.issuers.takeBackEnabled);
        assertFalse(policy.issuers.issuerHelps);
    }

    /** A configuration as ConfigAdmin would deliver it: every attribute at its default but {@code io_worker_policy}. */
    static WorkerConfig config(String policy) {
        WorkerConfig d = WorkerPoolTest.config(WorkerSettings.DEFAULT_MIN_WORKERS, WorkerSettings.DEFAULT_MAX_WORKERS,
                WorkerSettings.DEFAULT_IDLE_TIMEOUT_MS, WorkerSettings.DEFAULT_LAUNCH_INTERVAL_MS, WorkerSettings.UNSET);
        return (WorkerConfig) java.lang.reflect.Proxy.newProxyInstance(WorkerConfig.class.getClassLoader(),
                new Class<?>[] {WorkerConfig.class}, (proxy, m, args) -> m.getName().equals("io__worker__policy") ? policy
                        : m.invoke(d, args));
    }

    @Test
    void theSettingSelectsThePolicyLiveAndKeepsItOnABadValue() {
        WorkerIoMethod method = new WorkerIoMethod();
        method.activate(config("postgresql"));
        try {
            HandOffPolicy p = method.pool().handOff;
            assertFalse(p.isDefault(), "io_worker_policy = postgresql at activation");
            assertEquals(0, p.cpuCap.cpuCap);
            method.modified(config("pageio"));
            assertTrue(p.isDefault(), "io_worker_policy = pageio, applied live");
            method.modified(config("bogus"));
            assertTrue(p.isDefault(), "a bad value keeps the policy in force");
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> p.select("pg19"));
            assertEquals("io_worker_policy = 'pg19' is not valid: valid values are pageio, postgresql", e.getMessage());
        } finally {
            method.close();
        }
    }

    @Test
    void workersOnShortIosUpToTheCapHoldTheWakeUpBack() {
        policy.cpuCap.cpuCap = 2;
        long now = System.nanoTime();
        awake(0, now - 1_000, 10_000); // inside a 1 µs-old I/O, 10 µs on average: a page-cache copy
        idle(2);
        assertFalse(holds(now), "one short worker, cap 2: PostgreSQL's wake-up");
        awake(1, now - 1_000, 10_000);
        assertTrue(holds(now), "two short workers, cap 2: held back");
        assertNotEquals(0, policy.watch.heldAt(), "a held-back wake-up is noted for the supervisor's watch");
        policy.cpuCap.cpuCap = 0;
        assertFalse(holds(now), "cap off: never held back");
    }

    @Test
    void aWorkerOnLongIosOrStalledInOneDoesNotCount() {
        policy.cpuCap.cpuCap = 1;
        long now = System.nanoTime();
        awake(0, now - 1_000, TimeUnit.MILLISECONDS.toNanos(2)); // device reads: 2 ms on average
        assertEquals(0, awakeSoon(now));
        assertFalse(holds(now), "long I/Os: PostgreSQL's wake-up");
        IoWorker w = pool.workers.worker(0);
        w.ioNanosAvg = 10_000;
        assertEquals(1, awakeSoon(now));
        w.busySince = now - TimeUnit.MILLISECONDS.toNanos(5); // inside one short-average I/O for 5 ms: stalled
        assertEquals(0, awakeSoon(now));
        assertFalse(holds(now));
        assertEquals(0, policy.watch.heldAt(), "nothing held back");
    }

    @Test
    void aWorkerChosenAndOnItsWayCounts() {
        policy.cpuCap.cpuCap = 1;
        long now = System.nanoTime();
        idle(0);
        IoWorker w = pool.workers.worker(0);
        w.ioNanosAvg = TimeUnit.MILLISECONDS.toNanos(2);
        pool.queue.lock();
        try {
            assertEquals(0, pool.queue.chooseIdleLocked(-1));
        } finally {
            pool.queue.unlock();
        }
        assertEquals(1, awakeSoon(now), "woken, not arrived yet: it takes the next handle");
        assertTrue(holds(now));
    }

    @Test
    void shortIosAreJudgedByWorkerZero() {
        long now = System.nanoTime();
        awake(0, now, 10_000);
        assertTrue(shortIos());
        pool.workers.worker(0).ioNanosAvg = TimeUnit.MILLISECONDS.toNanos(1);
        assertFalse(shortIos());
    }

    int awakeSoon(long now) {
        pool.queue.lock();
        try {
            return policy.cpuCap.awakeSoonLocked(now);
        } finally {
            pool.queue.unlock();
        }
    }

    boolean shortIos() {
        pool.queue.lock();
        try {
            return policy.cpuCap.shortIosLocked();
        } finally {
            pool.queue.unlock();
        }
    }
}
