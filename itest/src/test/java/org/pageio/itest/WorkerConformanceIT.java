package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import javax.inject.Inject;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.Test;
import org.ops4j.pax.exam.util.Filter;
import org.pageio.api.IoCallback;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.tck.BlockPattern;
import org.pageio.tck.MethodConformanceKit;

/**
 * {@code io_method=worker} passes the method conformance kit, and its I/O really runs in the
 * pool: the shared completion callback runs in a thread named {@code pageio io worker N}, or in the
 * issuer only for an I/O the pool says it ran there (its {@code WorkerPool} MBean's
 * {@code InlineContended}, {@code InlineQueueFull} and {@code TakenBack}: a submission that found the
 * queue's lock taken runs inline, as PostgreSQL 19's does).
 */
public class WorkerConformanceIT extends MethodConformanceKit {

    @Inject
    @Filter("(io.method=worker)")
    private IoMethod worker;


    @Override
    protected IoMethod method() {
        return worker;
    }

    @Test
    public void sharedCallbacksRunInAnIoWorkerThreadAndLocalOnesInTheIssuer() throws Exception {
        Queue<String> shared = new ConcurrentLinkedQueue<>();
        Queue<String> local = new ConcurrentLinkedQueue<>();
        IoCallback where = new IoCallback() {
            public String name() {
                return "kit_where";
            }

            public long completeShared(IoHandle h, long r, int data) {
                shared.add(Thread.currentThread().getName());
                return r;
            }

            public long completeLocal(IoHandle h, long r, int data) {
                local.add(Thread.currentThread().getName());
                return r;
            }
        };
        long ranByIssuerBefore = ranByIssuer();
        try (IoSession s = ctx.openSession("kit")) {
            for (int i = 0; i < 8; i++) {
                MemorySegment buf = block();
                IoReturn ret = new IoReturn();
                IoHandle h = s.acquire();
                long gen = h.generation();
                h.setIovec(0, buf).setReturn(ret).addCallback(where, 0).startReadv(alphaFd, 1, (long) i * BLOCK);
                s.await(h, gen);
                assertEquals(ret.message(), IoResult.OK, ret.status());
                assertEquals(null, BlockPattern.check("alpha", i, buf));
            }
        }
        String me = Thread.currentThread().getName();
        assertEquals(8, shared.size());
        assertTrue("shared callbacks ran in " + shared,
                shared.stream().allMatch(n -> n.startsWith("pageio io worker ") || n.equals(me)));
        assertTrue("no shared callback ran in a worker: " + shared, shared.stream().anyMatch(n -> n.startsWith("pageio io worker ")));
        long inIssuer = shared.stream().filter(me::equals).count();
        long ranByIssuer = ranByIssuer() - ranByIssuerBefore;
        assertTrue(inIssuer + " shared callbacks ran in the issuer, but the pool ran " + ranByIssuer + " I/Os there",
                inIssuer <= ranByIssuer);
        assertTrue("local callbacks ran in " + local,
                local.stream().allMatch(n -> n.equals(me)));
    }

    /** I/Os the pool ran in their issuer: inline (queue lock taken, queue full) or taken back from the queue. */
    private static long ranByIssuer() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName pool = new ObjectName("org.pageio:type=WorkerPool");
        return (Long) server.getAttribute(pool, "InlineContended") + (Long) server.getAttribute(pool, "InlineQueueFull")
                + (Long) server.getAttribute(pool, "TakenBack");
    }
}
