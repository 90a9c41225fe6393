package org.pageio.method.direct;

import java.util.Map;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoSession;
import org.pageio.posix.CallState;
import org.pageio.uring.IoUring;
import org.pageio.uring.IoUringCounters;
import org.pageio.uring.IoUringProbe;

/**
 * {@code io_method=direct}: every read and write bypasses the page cache (O_DIRECT) and is
 * submitted through an io_uring ring per session — the uring bundle's {@link IoUring}, reused
 * through its exported package — when io_uring is available here, else through this bundle's
 * own I/O threads ({@link ThreadsEngine}). {@link #availability()}'s cause says which engine runs
 * and why; so does {@link #toString()}.
 *
 * <p>Descriptors: the method takes the descriptors it is handed into O_DIRECT mode itself
 * ({@code fcntl(F_SETFL, O_DIRECT)}, once per descriptor and session), so callers may open files
 * as they like (a storage manager opening with O_DIRECT skips that step). Every read or write is
 * checked against the 4096-byte alignment rule in the issuer and refused before the kernel with a
 * message naming the misaligned part; the first direct read of a descriptor in a session is
 * preceded by {@code fdatasync} so that pages written through the page cache are on disk first.
 *
 * <p>Settings ({@link DirectSettings}): component property {@code engine} (configuration PID
 * {@value #PID}) or framework property {@value #ENGINE_PROPERTY}: {@code auto} (default),
 * {@code io_uring} or {@code threads}; {@code io_direct_threads} (default 16) sizes the threads
 * engine. An invalid value leaves the method unavailable, the cause naming the setting and its
 * valid values. Outside a container, {@link #DirectIoMethod(DirectSettings)} starts the method
 * with given settings and {@link #close()} stops it.
 */
@Component(service = IoMethod.class, property = IoMethod.PROPERTY + "=" + DirectIoMethod.NAME,
        configurationPid = DirectIoMethod.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL)
public final class DirectIoMethod implements IoMethod, AutoCloseable {

    public static final String NAME = "direct";
    public static final String PID = "org.pageio.method.direct";
    public static final String ENGINE_PROPERTY = "pageio.direct.engine";

    /** The engine in use. */
    public enum Engine {
        IO_URING("io_uring"), THREADS("threads"), NONE("none");

        final String label;

        Engine(String label) {
            this.label = label;
        }

        @Override
        public String toString() {
            return label;
        }
    }

    private volatile Engine engine = Engine.NONE;
    private volatile String reason = "the component is not activated";
    private volatile Availability availability = Availability.unavailable("io_method=direct: " + reason);
    private volatile ThreadsEngine threads;
    /** The counters of the rings of closed sessions, added up at {@code closeSession} (guarded by {@code this}). */
    private IoUringCounters closedRings = IoUringCounters.NONE;

    /** For the container: {@link #activate} reads the settings and starts the engine. */
    public DirectIoMethod() {
    }

    /**
     * Outside a container (tests, benchmarks): a method with {@code settings}, its engine chosen and
     * started now (the io_uring probe runs in the calling thread); {@link #close()} stops it.
     */
    public DirectIoMethod(DirectSettings settings) {
        start(settings);
    }

    @Activate
    void activate(BundleContext bc, Map<String, Object> props) {
        DirectSettings settings;
        try {
            settings = DirectSettings.from(props, bc == null ? null : bc.getProperty(ENGINE_PROPERTY));
        } catch (IllegalArgumentException e) {
            engine = Engine.NONE;
            reason = e.getMessage();
            availability = Availability.unavailable("io_method=direct: " + reason);
            return;
        }
        start(settings);
    }

    /** Chooses and starts the engine {@code settings} ask for. */
    private void start(DirectSettings settings) {
        DirectSettings.EngineChoice w = settings.engine();
        switch (w) {
            case THREADS -> useThreads(settings.ioDirectThreads(), "engine = threads was configured");
            case IO_URING, AUTO -> {
                IoUringProbe probe = IoUring.probe();
                if (probe.available()) {
                    engine = Engine.IO_URING;
                    reason = "io_uring is available here" + (w == DirectSettings.EngineChoice.AUTO ? " (engine = auto)"
                            : " (engine = io_uring was configured)");
                    availability = new Availability(true, "engine io_uring: " + reason);
                } else if (w == DirectSettings.EngineChoice.AUTO) {
                    useThreads(settings.ioDirectThreads(), "io_uring is not available here (engine = auto): " + probe.cause());
                } else {
                    engine = Engine.NONE;
                    reason = "engine = io_uring was configured but io_uring is not available here: " + probe.cause();
                    availability = Availability.unavailable("io_method=direct: " + reason + "; set engine = threads or auto");
                }
            }
        }
    }

    private void useThreads(int nthreads, String why) {
        threads = new ThreadsEngine(nthreads, 1024);
        engine = Engine.THREADS;
        reason = why;
        availability = new Availability(true, "engine threads (" + threads.threads() + " I/O threads): " + why);
    }

    @Deactivate
    void deactivate() {
        ThreadsEngine t = threads;
        threads = null;
        if (t != null) {
            t.stop();
        }
        availability = Availability.unavailable("io_method=direct: the component was deactivated");
    }

    /** Stops the threads engine, if any (what is queued completes with -ECANCELED); the method is then unavailable. */
    @Override
    public void close() {
        deactivate();
    }

    /** The engine in use: io_uring or threads (none when unavailable). */
    public Engine engine() {
        return engine;
    }

    /** Why that engine. */
    public String engineReason() {
        return reason;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Availability availability() {
        return availability;
    }

    @Override
    public Object openSession(IoSession session) {
        return new DirectSession(engine == Engine.IO_URING
                ? IoUring.open(session.context(), session.context().config().ioMaxConcurrency()) : null);
    }

    @Override
    public void closeSession(IoSession session, Object methodState) {
        if (methodState instanceof DirectSession ds && ds.ring != null) {
            addRingTotals(ds.ring);
            ds.ring.close();
        }
    }

    @Override
    public boolean needsSynchronousExecution(IoHandle handle) {
        // A handle referencing the issuer's local memory must not leave its thread (threads engine).
        return engine == Engine.THREADS && (handle.flags() & IoHandle.FLAG_REFERENCES_LOCAL) != 0;
    }

    /** Inline execution (the caller's FLAG_SYNCHRONOUS, or REFERENCES_LOCAL): same rules, in the issuer. */
    @Override
    public void performSynchronously(IoHandle handle, CallState callState) {
        if (session(handle).admit(handle, callState)) {
            handle.performSynchronously(callState);
        }
    }

    @Override
    public int submit(IoHandle[] handles, int count) {
        if (count == 0) {
            return 0;
        }
        IoSession session = handles[0].session();
        DirectSession ds = session(handles[0]);
        CallState cs = session.callState();
        if (ds.ring != null) {
            int prepared = 0;
            for (int i = 0; i < count; i++) {
                IoHandle h = handles[i];
                if (ds.admit(h, cs)) {
                    ds.ring.prepare(h, 0); // never IOSQE_ASYNC: direct I/O does not complete inline anyway
                    prepared++;
                }
            }
            if (prepared > 0) {
                ds.ring.submit(cs);
            }
        } else {
            ThreadsEngine t = threads;
            for (int i = 0; i < count; i++) {
                IoHandle h = handles[i];
                if (ds.admit(h, cs)) {
                    if (t != null) {
                        t.submit(h, cs);
                    } else {
                        h.performSynchronously(cs); // deactivated meanwhile: still complete it
                    }
                }
            }
        }
        return count;
    }

    private static DirectSession session(IoHandle h) {
        if (h.session().methodState() instanceof DirectSession ds) {
            return ds;
        }
        throw new IllegalStateException("io_method=direct: session " + h.session().id()
                + " has no direct I/O state; openSession did not run for it, which is a bug in the AIO core");
    }

    @Override
    public boolean hasWaitOne() {
        return engine == Engine.IO_URING;
    }

    @Override
    public void waitOne(IoHandle handle, long generation) {
        if (handle.session().methodState() instanceof DirectSession ds && ds.ring != null) {
            ds.ring.waitFor(handle, generation);
        }
    }

    @Override
    public void waitProgress(IoHandle handle, long generation, int max) {
        if (handle.session().methodState() instanceof DirectSession ds && ds.ring != null) {
            ds.ring.waitForProgress(handle, generation, max);
        }
    }

    @Override
    public int readyCompletions(IoSession session) {
        return session.methodState() instanceof DirectSession ds && ds.ring != null ? ds.ring.readyCompletions() : 0;
    }

    @Override
    public void checkOne(IoHandle handle, long generation) {
        if (handle.session().methodState() instanceof DirectSession ds && ds.ring != null) {
            ds.ring.poll();
        }
    }

    /** Every read and write is O_DIRECT: no kernel read-ahead, so streams must not ramp up slowly. */
    @Override
    public boolean bypassesPageCache() {
        return true;
    }

    /** io_uring's io-wq and our threads both may still be using a descriptor being closed. */
    @Override
    public boolean waitOnFdBeforeClose() {
        return true;
    }

    private synchronized void addRingTotals(IoUring ring) {
        closedRings = closedRings.plus(ring.counters());
    }

    /**
     * The counters of every closed session's ring, added up (none for the threads engine): what a
     * benchmark prints as {@code io_uring_enter} calls per read and the device depth kept. Any thread.
     */
    public synchronized IoUringCounters ringCounters() {
        return closedRings;
    }

    /** Statistics of one session: {directSetups, flushes, refusals}; owner thread. */
    static long[] sessionStats(IoSession s) {
        DirectSession ds = (DirectSession) s.methodState();
        return new long[] {ds.directSetups, ds.flushes, ds.refusals};
    }

    @Override
    public String toString() {
        return "DirectIoMethod[engine " + engine + ": " + reason + "]";
    }
}
