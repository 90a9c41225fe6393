package org.pageio.method.posixaio;

import java.util.Objects;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.Designate;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoSession;

/**
 * {@code io_method=posix_aio}: the POSIX asynchronous I/O interface of the C library —
 * {@code lio_listio(LIO_NOWAIT)} per batch ({@code aio_read}/{@code aio_write} for a batch of one
 * request), {@code aio_fsync}, and completion learnt by asking ({@code aio_error},
 * {@code aio_suspend}; {@code SIGEV_NONE}). On Linux glibc runs each request with
 * {@code pread}/{@code pwrite}/{@code fsync} in a pool of its own threads (not the kernel's
 * asynchronous I/O): the method is a portable interface over a thread pool, as {@code worker} is one
 * of pageio's own. A user chooses it for code that must also run where POSIX AIO is what the system
 * offers (FreeBSD's is in the kernel, macOS has it), or to compare glibc's pool with pageio's.
 *
 * <p>Each session gets an {@link AioSession}: a pool of control blocks made once. Whoever waits for
 * a handle completes it (the owner, another session's thread, a thread without a session), under
 * the session's completion lock, and runs its shared callbacks: see {@link AioSession}. glibc runs
 * one request per descriptor at a time, so reads are spread over {@code posix_aio_fds_per_file}
 * descriptors of their file, duplicates validated against the issuer's descriptor at each
 * submission: see {@link Duplicates}.
 *
 * <p>Settings (PID {@value #PID}, {@link PosixAioConfig}, {@link PosixAioSettings}): glibc's
 * {@code aio_init} sizes, passed before the first request of the process (at activation, or by the
 * public constructor). {@code posix_aio_threads} and {@code posix_aio_num} size glibc's pool once
 * per process, when it queues its first request; a later change is kept and applies at the next
 * start. {@code posix_aio_idle_time} and {@code posix_aio_fds_per_file} apply at once. An invalid value is rejected with a warning
 * naming the setting and its range, and the values in force stay; {@code availability().cause()}
 * shows the rejection until a valid configuration comes.
 *
 * <p>Availability: the functions are looked up once ({@link Aio}); when the C library lacks one,
 * or is not glibc, the method stays registered, unavailable, naming what is missing.
 */
@Component(service = IoMethod.class, property = IoMethod.PROPERTY + "=" + PosixAioIoMethod.NAME,
        configurationPid = PosixAioIoMethod.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = PosixAioConfig.class)
public final class PosixAioIoMethod implements IoMethod {

    public static final String NAME = "posix_aio";
    /** The configuration PID. */
    public static final String PID = "org.pageio.method.posixaio";

    private static final System.Logger LOG = System.getLogger(PID);

    /**
     * Whether this process queued a request through this bundle yet: from then on glibc's pool is
     * sized and {@code aio_init} changes only its idle time. Set by the first submission.
     */
    private static volatile boolean poolStarted;
    /** The settings passed to {@code aio_init} before the first request: what glibc's pool was sized with. */
    private static volatile PosixAioSettings sizedWith;

    /** The settings last applied. Written by the configuration thread, read anywhere. */
    private volatile PosixAioSettings settings = PosixAioSettings.DEFAULTS;
    /** The duplicates of the descriptors reads are queued on, shared by the sessions. */
    private final Duplicates duplicates = new Duplicates(PosixAioSettings.DEFAULT_FDS_PER_FILE);
    /** Reads the page cache holds complete at submission (pageio's policy), shared by the sessions. */
    final CachedReadsInline cachedReads = new CachedReadsInline();
    /** The last rejected configuration, as one line; null when none was rejected. */
    private volatile String rejected;

    /** For the container: {@link #activate} reads the configuration and calls {@code aio_init}. */
    public PosixAioIoMethod() {
    }

    /**
     * Outside a container (tests, benchmarks): a method with {@code settings}, passed to
     * {@code aio_init} now when the C library has POSIX AIO; ready for {@code AioContext.create}.
     */
    public PosixAioIoMethod(PosixAioSettings settings) {
        apply(Objects.requireNonNull(settings, "settings"));
    }

    @Activate
    void activate(PosixAioConfig config) {
        configure(config, "using the defaults");
    }

    /** Closes the duplicates no read is in flight on (the sessions are closed by then). */
    @Deactivate
    void deactivate() {
        duplicates.close();
    }

    /** Applies a changed configuration; an invalid one is rejected. Never throws. */
    @Modified
    void modified(PosixAioConfig config) {
        configure(config, "keeping " + settings.describe());
    }

    private void configure(PosixAioConfig config, String verb) {
        PosixAioSettings s;
        try {
            s = PosixAioSettings.from(config);
        } catch (IllegalArgumentException e) {
            String line = "io_method=posix_aio: rejected configuration: " + e.getMessage() + "; " + verb;
            rejected = line;
            LOG.log(System.Logger.Level.WARNING, line);
            if (sizedWith == null && !poolStarted) {
                apply(settings);
            }
            return;
        }
        rejected = null;
        apply(s);
    }

    /**
     * Passes {@code s} to glibc's {@code aio_init} (when available). Before the process's first
     * request it sizes glibc's pool; after, only {@code posix_aio_idle_time} takes effect, and the
     * sizes are kept for the next start (logged). Any thread; serialised by the caller (SCR).
     */
    public synchronized void apply(PosixAioSettings s) {
        PosixAioSettings old = settings;
        settings = s;
        duplicates.setPerFile(s.fdsPerFile());
        if (!Aio.AVAILABILITY.available()) {
            return;
        }
        boolean started = poolStarted;
        Aio.init(s);
        if (!started) {
            sizedWith = s;
        } else if (sizedWith != null && (s.threads() != sizedWith.threads() || s.num() != sizedWith.num())) {
            LOG.log(System.Logger.Level.INFO, "io_method=posix_aio: " + PosixAioSettings.THREADS + " = " + s.threads()
                    + " and " + PosixAioSettings.NUM + " = " + s.num() + " apply at the next start: glibc sized its pool"
                    + " at this process's first request (" + PosixAioSettings.THREADS + " = " + sizedWith.threads() + ", "
                    + PosixAioSettings.NUM + " = " + sizedWith.num() + "); " + PosixAioSettings.IDLE_TIME + " = "
                    + s.idleTime() + " s and " + PosixAioSettings.FDS_PER_FILE + " = " + s.fdsPerFile() + " apply now");
        } else if (!old.equals(s)) {
            LOG.log(System.Logger.Level.INFO, "io_method=posix_aio: " + s.describe());
        }
    }

    /** The settings last applied. Any thread. */
    public PosixAioSettings settings() {
        return settings;
    }

    /** The duplicates of the descriptors reads are queued on. */
    Duplicates duplicates() {
        return duplicates;
    }

    /**
     * The sizes glibc's pool has in this process, as far as pageio set them: the settings passed
     * before the first request, or {@code null} when none were (nothing queued yet, or POSIX AIO is
     * unavailable). Any thread.
     */
    public static PosixAioSettings poolSizedWith() {
        return poolStarted ? sizedWith : null;
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Whether the C library has POSIX AIO; when available and a configuration was rejected, the rejection as its cause. */
    @Override
    public Availability availability() {
        Availability a = Aio.AVAILABILITY;
        String r = rejected;
        return r != null && a.available() ? new Availability(true, r) : a;
    }

    /** The session's pool of control blocks ({@code io_max_concurrency × io_max_combine_limit}), in an {@link AioSession}. */
    @Override
    public Object openSession(IoSession session) {
        if (!Aio.AVAILABILITY.available()) {
            throw new IllegalStateException("io_method=posix_aio is not available: " + Aio.AVAILABILITY.cause());
        }
        return new AioSession(session, duplicates, cachedReads);
    }

    @Override
    public void closeSession(IoSession session, Object methodState) {
        if (methodState instanceof AioSession as) {
            as.close();
        }
    }

    @Override
    public int submit(IoHandle[] handles, int count) {
        if (count == 0) {
            return 0;
        }
        IoSession session = handles[0].session();
        if (!(session.methodState() instanceof AioSession as)) {
            throw new IllegalStateException("io_method=posix_aio: session " + session.id()
                    + " has no control blocks; openSession did not run for it, which is a bug in the AIO core");
        }
        if (!poolStarted) {
            poolStarted = true; // from here on glibc's pool is sized (aio_init was called before, at activation)
        }
        as.submit(handles, count, session.callState());
        return count;
    }

    @Override
    public boolean hasWaitOne() {
        return true;
    }

    /** Reaps the session's finished requests and sleeps in {@code aio_suspend} until the handle completed. Any thread. */
    @Override
    public void waitOne(IoHandle handle, long generation) {
        // null, or closed, when the session closed meanwhile (then the I/O is over)
        if (handle.session().methodState() instanceof AioSession as) {
            as.waitFor(handle, generation);
        }
    }

    /** Reaps what is over, if nobody else is reaping that session. Any thread; never blocks. */
    @Override
    public void checkOne(IoHandle handle, long generation) {
        if (handle.session().methodState() instanceof AioSession as) {
            as.poll();
        }
    }

    /**
     * glibc keeps a queued request's descriptor number, not a reference to the file: closing it
     * (and a reuse of the number) while a request waits would send the request to another file.
     * Reads queued on a duplicate are counted by the handle's descriptor all the same, and the
     * duplicate outlives them ({@link Duplicates}).
     */
    @Override
    public boolean waitOnFdBeforeClose() {
        return true;
    }

    @Override
    public String toString() {
        String r = rejected;
        return "PosixAioIoMethod[" + availability() + ", " + settings.describe() + (r == null ? "" : "; " + r) + "]";
    }
}
