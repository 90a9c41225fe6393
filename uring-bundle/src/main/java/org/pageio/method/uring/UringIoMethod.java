package org.pageio.method.uring;

import java.util.Locale;
import java.util.Objects;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.Designate;
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
 * <p>Availability is probed once, at activation (or by the public constructor), by creating a
 * ring; when that fails the method stays registered, unavailable, with the cause
 * ({@code pageio:methods} shows it) and {@code AioContext.create} refuses it.
 *
 * <p>Setting (PID {@value #PID}, {@link UringConfig}): {@value #FORCE_ASYNC_SETTING}, when a
 * buffered I/O is submitted with {@link IoUring#IOSQE_ASYNC} ({@link ForceAsync}). It applies
 * live, from the next submission on; an invalid value is rejected with a warning that names the
 * setting and its valid values, and the value in force stays (the default at activation).
 */
@Component(service = IoMethod.class, property = IoMethod.PROPERTY + "=" + UringIoMethod.NAME,
        configurationPid = UringIoMethod.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = UringConfig.class)
public final class UringIoMethod implements IoMethod {

    public static final String NAME = "io_uring";
    /** The configuration PID. */
    public static final String PID = "org.pageio.method.uring";
    /** The setting that chooses {@link ForceAsync}. */
    public static final String FORCE_ASYNC_SETTING = "io_uring_force_async";

    private static final System.Logger LOG = System.getLogger(PID);

    /**
     * When to set {@link IoUring#IOSQE_ASYNC} (punt to an io-wq worker at once) on a buffered I/O:
     * the values of {@value #FORCE_ASYNC_SETTING}. Direct I/O is never punted.
     */
    public enum ForceAsync {
        /**
         * {@code auto}, the default: buffered reads of 4 blocks (32 KiB) and more, unless the
         * ring's recent ones completed inline (their pages were cached); see {@link UringSession}.
         */
        AUTO("auto"),
        /** {@code large}: buffered reads of 4 blocks (32 KiB) and more, however many are in flight. */
        LARGE("large"),
        /** {@code pg19}, PostgreSQL 19: buffered reads only, once more than 4 are in flight or at 4 blocks and more. */
        PG19("pg19"),
        /** {@code pg18}, PostgreSQL 18: buffered reads and writes once more than 4 I/Os are in flight. */
        PG18("pg18"),
        /** {@code never}: the kernel tries the page cache inline and waits for pages asynchronously. */
        NEVER("never");

        private final String value;

        ForceAsync(String value) {
            this.value = value;
        }

        /** The setting's value, e.g. {@code large}. */
        public String value() {
            return value;
        }

        /**
         * The policy a setting value names, case-insensitively, as PostgreSQL reads an enum
         * setting.
         *
         * @throws IllegalArgumentException naming the setting, the value and the valid values
         */
        public static ForceAsync parse(String value) {
            String v = value == null ? "" : value.strip().toLowerCase(Locale.ROOT);
            for (ForceAsync f : values()) {
                if (f.value.equals(v)) {
                    return f;
                }
            }
            throw new IllegalArgumentException(FORCE_ASYNC_SETTING + " = " + value
                    + " is not valid: valid values are auto, large, pg19, pg18, never");
        }

        @Override
        public String toString() {
            return value;
        }
    }

    /** PostgreSQL's threshold: more than this many I/Os in flight (earlier batch members included). */
    static final int ASYNC_IN_FLIGHT_THRESHOLD = 4;
    /** PostgreSQL 19's size threshold: 4 blocks of 8 KiB. */
    static final long ASYNC_MIN_BYTES = 4 * 8192;
    /**
     * The default, chosen by measurement (uring-bundle/README.md, "IOSQE_ASYNC"): on cold buffered
     * reads on a 2-core machine, punting 128 KiB reads to io-wq let the page-cache copies run
     * beside the issuer, while punting 8 KiB reads cost IOPS (thread hand-offs for little
     * copying). PostgreSQL's "more than 4 in flight" rule punts both; the size alone picks the
     * right one for each. When the pages are cached, a punted read pays the hand-off for a copy
     * the issuer does as fast inline, so {@code auto} punts only while reads are not cached.
     */
    public static final ForceAsync DEFAULT_FORCE_ASYNC = ForceAsync.AUTO;

    /** The policy in force; read once per submitted batch, written by the configuration thread. */
    private volatile ForceAsync forceAsync;
    /** The last rejected configuration, as one line; null when none was rejected. */
    private volatile String rejected;
    private volatile Availability availability = Availability.unavailable(
            "io_uring was not probed yet: the component is not activated");

    /** For the container: {@link #activate} probes and reads the configuration. */
    public UringIoMethod() {
        this.forceAsync = DEFAULT_FORCE_ASYNC;
    }

    /**
     * Outside a container (tests, benchmarks): a method with {@value #FORCE_ASYNC_SETTING} =
     * {@code forceAsync}, probed now in the calling thread, ready for {@code AioContext.create}.
     */
    public UringIoMethod(ForceAsync forceAsync) {
        this.forceAsync = Objects.requireNonNull(forceAsync, FORCE_ASYNC_SETTING);
        probe();
    }

    /** Reads the configuration, then probes io_uring once, by creating (and closing) a ring in this thread. */
    @Activate
    void activate(UringConfig config) {
        configure(config, "using the default " + DEFAULT_FORCE_ASYNC);
        probe();
    }

    /** Applies a changed configuration from the next submission on; an invalid one is rejected. Never throws. */
    @Modified
    void modified(UringConfig config) {
        configure(config, "keeping " + forceAsync);
    }

    private void configure(UringConfig config, String verb) {
        try {
            forceAsync = ForceAsync.parse(config.io__uring__force__async());
            rejected = null;
        } catch (IllegalArgumentException e) {
            String line = "io_method=io_uring: rejected configuration: " + e.getMessage() + "; " + verb;
            rejected = line;
            LOG.log(System.Logger.Level.WARNING, line);
        }
    }

    private void probe() {
        IoUringProbe probe = IoUring.probe();
        availability = probe.availability();
    }

    /** The {@link ForceAsync} policy in force. Any thread. */
    public ForceAsync forceAsync() {
        return forceAsync;
    }

    @Override
    public String name() {
        return NAME;
    }

    /** The probe's verdict; when available and a configuration was rejected, the rejection as its cause. */
    @Override
    public Availability availability() {
        Availability a = availability;
        String r = rejected;
        return r != null && a.available() ? new Availability(true, r) : a;
    }

    /**
     * The session's ring ({@code io_max_concurrency} entries, so its SQ can never overflow) in a
     * {@link UringSession}, whose {@code get()} returns it.
     */
    @Override
    public Object openSession(IoSession session) {
        int entries = session.context().config().ioMaxConcurrency();
        return new UringSession(IoUring.open(session.context(), entries), entries);
    }

    @Override
    public void closeSession(IoSession session, Object methodState) {
        if (methodState instanceof UringSession us) {
            us.get().close();
        }
    }

    @Override
    public int submit(IoHandle[] handles, int count) {
        if (count == 0) {
            return 0;
        }
        IoSession session = handles[0].session();
        if (!(session.methodState() instanceof UringSession us)) {
            throw new IllegalStateException("io_method=io_uring: session " + session.id()
                    + " has no ring; openSession did not run for it, which is a bug in the AIO core");
        }
        // The batch is already on the in-flight list: what was in flight before it is the rest.
        int inFlightBefore = session.inFlightCount() - count;
        ForceAsync policy = forceAsync; // one volatile read per batch
        IoUring ring = us.get();
        for (int i = 0; i < count; i++) {
            IoHandle h = handles[i];
            int flags = sqeFlags(policy, h, inFlightBefore);
            if (policy == ForceAsync.AUTO && flags != 0) {
                flags = us.autoFlags(h);
            }
            ring.prepare(h, flags);
            inFlightBefore++;
        }
        ring.submit(session.callState());
        us.afterSubmit();
        return count;
    }

    /**
     * {@link IoUring#IOSQE_ASYNC} or 0 for {@code h}, as the policy in force says; for
     * {@code auto}, whether {@code h} is a candidate (the session decides at submission).
     */
    int sqeFlags(IoHandle h, int inFlightBefore) {
        return sqeFlags(forceAsync, h, inFlightBefore);
    }

    private static int sqeFlags(ForceAsync policy, IoHandle h, int inFlightBefore) {
        if ((h.flags() & IoHandle.FLAG_BUFFERED) == 0) {
            return 0; // never for direct I/O: the kernel does not complete it inline anyway
        }
        return switch (policy) {
            case NEVER -> 0;
            case PG18 -> (h.op() == IoHandle.OP_READV || h.op() == IoHandle.OP_WRITEV)
                    && inFlightBefore > ASYNC_IN_FLIGHT_THRESHOLD ? IoUring.IOSQE_ASYNC : 0;
            case PG19 -> h.op() == IoHandle.OP_READV
                    && (inFlightBefore > ASYNC_IN_FLIGHT_THRESHOLD || h.length() >= ASYNC_MIN_BYTES)
                    ? IoUring.IOSQE_ASYNC : 0;
            // AUTO: the candidates LARGE would punt; the session decides (UringSession.autoFlags)
            case LARGE, AUTO -> h.op() == IoHandle.OP_READV && h.length() >= ASYNC_MIN_BYTES ? IoUring.IOSQE_ASYNC : 0;
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
        if (handle.session().methodState() instanceof UringSession us) {
            us.get().waitFor(handle, generation);
        }
    }

    /** Waits on the owner's ring until the handle completed or a CQE is ready; reaps at most {@code max}. */
    @Override
    public void waitProgress(IoHandle handle, long generation, int max) {
        if (handle.session().methodState() instanceof UringSession us) {
            us.get().waitForProgress(handle, generation, max);
        }
    }

    /** CQEs waiting in the session's ring. */
    @Override
    public int readyCompletions(IoSession session) {
        return session.methodState() instanceof UringSession us ? us.get().readyCompletions() : 0;
    }

    /** Reaps what is ready, if nobody else is reaping that ring. Any thread; never blocks. */
    @Override
    public void checkOne(IoHandle handle, long generation) {
        if (handle.session().methodState() instanceof UringSession us) {
            us.get().poll();
        }
    }

    /** Async requests (io-wq) hold a reference to the file until they complete. */
    @Override
    public boolean waitOnFdBeforeClose() {
        return true;
    }

    @Override
    public String toString() {
        String r = rejected;
        return "UringIoMethod[" + availability + ", " + FORCE_ASYNC_SETTING + " = " + forceAsync
                + (r == null ? "" : "; " + r) + "]";
    }
}
