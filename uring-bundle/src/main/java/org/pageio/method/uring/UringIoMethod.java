package org.pageio.method.uring;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoSession;
import org.pageio.uring.IoUring;
import org.pageio.uring.IoUringProbe;

/**
 * {@code io_method=io_uring} (PostgreSQL's method_io_uring.c): one {@link IoUring} per session,
 * created in the session's thread with {@code io_max_concurrency} entries. The owner fills one
 * SQE per staged handle and enters the kernel once per batch; any thread that waits for a
 * handle reaps its owner's ring under that ring's completion lock.
 *
 * <p>Availability is probed once, at activation, by creating a ring; when that fails the method
 * stays registered, unavailable, with the cause ({@code pageio:methods} shows it) and
 * {@code AioContext.create} refuses it.
 */
@Component(service = IoMethod.class, property = IoMethod.PROPERTY + "=" + UringIoMethod.NAME)
public final class UringIoMethod implements IoMethod {

    public static final String NAME = "io_uring";

    /**
     * When to set {@link IoUring#IOSQE_ASYNC} (punt to an io-wq worker at once) on a buffered I/O.
     * Package-private: a switch for the benchmark ({@code UringVsFioBench}) and tests.
     */
    enum ForceAsync {
        /** Never: the kernel tries the page cache inline and waits for pages asynchronously. */
        NEVER,
        /** PostgreSQL 18: buffered reads and writes once more than 4 I/Os are in flight. */
        PG18,
        /** PostgreSQL 19: buffered reads only, once more than 4 are in flight or at 4 blocks (32 KiB) and more. */
        PG19,
        /** Buffered reads of 4 blocks (32 KiB) and more, however many are in flight. */
        LARGE
    }

    /** PostgreSQL's threshold: more than this many I/Os in flight (earlier batch members included). */
    static final int ASYNC_IN_FLIGHT_THRESHOLD = 4;
    /** PostgreSQL 19's size threshold: 4 blocks of 8 KiB. */
    static final long ASYNC_MIN_BYTES = 4 * 8192;
    /**
     * The default, chosen by measurement (uring-bundle/README.md, "IOSQE_ASYNC"): on cold buffered
     * reads on this 2-core machine, punting 128 KiB reads to io-wq let the page-cache copies run
     * beside the issuer and raised bandwidth, while punting 8 KiB reads cost IOPS (thread hand-offs
     * for little copying). PostgreSQL's "more than 4 in flight" rule punts both; the size alone
     * picks the right one for each.
     */
    static final ForceAsync DEFAULT_FORCE_ASYNC = ForceAsync.LARGE;

    private final ForceAsync forceAsync;
    private volatile Availability availability = Availability.unavailable(
            "io_uring was not probed yet: the component is not activated");

    public UringIoMethod() {
        this(DEFAULT_FORCE_ASYNC);
    }

    UringIoMethod(ForceAsync forceAsync) {
        this.forceAsync = forceAsync;
    }

    /** Probes io_uring once, by creating (and closing) a ring in this thread. */
    @Activate
    void activate() {
        IoUringProbe probe = IoUring.probe();
        availability = probe.availability();
    }

    ForceAsync forceAsync() {
        return forceAsync;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Availability availability() {
        return availability;
    }

    /** The session's ring: {@code io_max_concurrency} entries, so its SQ can never overflow. */
    @Override
    public Object openSession(IoSession session) {
        return IoUring.open(session.context(), session.context().config().ioMaxConcurrency());
    }

    @Override
    public void closeSession(IoSession session, Object methodState) {
        if (methodState instanceof IoUring ring) {
            ring.close();
        }
    }

    @Override
    public int submit(IoHandle[] handles, int count) {
        if (count == 0) {
            return 0;
        }
        IoSession session = handles[0].session();
        if (!(session.methodState() instanceof IoUring ring)) {
            throw new IllegalStateException("io_method=io_uring: session " + session.id()
                    + " has no ring; openSession did not run for it, which is a bug in the AIO core");
        }
        // The batch is already on the in-flight list: what was in flight before it is the rest.
        int inFlightBefore = session.inFlightCount() - count;
        for (int i = 0; i < count; i++) {
            IoHandle h = handles[i];
            ring.prepare(h, sqeFlags(h, inFlightBefore));
            inFlightBefore++;
        }
        ring.submit(session.callState());
        return count;
    }

    /** {@link IoUring#IOSQE_ASYNC} or 0 for {@code h}, as {@link #forceAsync} says. */
    int sqeFlags(IoHandle h, int inFlightBefore) {
        if ((h.flags() & IoHandle.FLAG_BUFFERED) == 0) {
            return 0; // never for direct I/O: the kernel does not complete it inline anyway
        }
        return switch (forceAsync) {
            case NEVER -> 0;
            case PG18 -> (h.op() == IoHandle.OP_READV || h.op() == IoHandle.OP_WRITEV)
                    && inFlightBefore > ASYNC_IN_FLIGHT_THRESHOLD ? IoUring.IOSQE_ASYNC : 0;
            case PG19 -> h.op() == IoHandle.OP_READV
                    && (inFlightBefore > ASYNC_IN_FLIGHT_THRESHOLD || h.length() >= ASYNC_MIN_BYTES)
                    ? IoUring.IOSQE_ASYNC : 0;
            case LARGE -> h.op() == IoHandle.OP_READV && h.length() >= ASYNC_MIN_BYTES ? IoUring.IOSQE_ASYNC : 0;
        };
    }

    @Override
    public boolean hasWaitOne() {
        return true;
    }

    /** Reaps the owner's ring under its completion lock until the handle completed. Any thread. */
    @Override
    public void waitOne(IoHandle handle, long generation) {
        // The session's ring; null or closed if the session closed meanwhile (then the I/O is over).
        if (handle.session().methodState() instanceof IoUring ring) {
            ring.waitFor(handle, generation);
        }
    }

    /** Waits on the owner's ring until the handle completed or a CQE is ready; reaps at most {@code max}. */
    @Override
    public void waitProgress(IoHandle handle, long generation, int max) {
        if (handle.session().methodState() instanceof IoUring ring) {
            ring.waitForProgress(handle, generation, max);
        }
    }

    /** CQEs waiting in the session's ring. */
    @Override
    public int readyCompletions(IoSession session) {
        return session.methodState() instanceof IoUring ring ? ring.readyCompletions() : 0;
    }

    /** Reaps what is ready, if nobody else is reaping that ring. Any thread; never blocks. */
    @Override
    public void checkOne(IoHandle handle, long generation) {
        if (handle.session().methodState() instanceof IoUring ring) {
            ring.poll();
        }
    }

    /** Async requests (io-wq) hold a reference to the file until they complete. */
    @Override
    public boolean waitOnFdBeforeClose() {
        return true;
    }

    @Override
    public String toString() {
        return "UringIoMethod[" + availability + ", IOSQE_ASYNC " + forceAsync + "]";
    }
}
