package org.pageio.bufmgr.internal;

import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Filter;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;
import org.pageio.api.AioContext;
import org.pageio.api.IoMethod;
import org.pageio.api.MethodSwap;
import org.pageio.bufmgr.BgWriterSettings;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.MethodStatus;
import org.pageio.bufmgr.smgr.StorageManager;

/**
 * The buffer manager service, with a hot-swappable I/O method.
 *
 * <p>It tracks every {@link IoMethod} service (dynamic, multiple, at least one) and binds the
 * one the {@code ioMethod.target} filter names ({@code (io.method=worker)} by default, as
 * PostgreSQL's {@code io_method}); while that one is not registered, the {@code io_method_fallback}
 * method ({@code sync} by default), or, with no fallback, none: new reads then wait at the method
 * gate with a message saying why, until a matching method registers. A change of
 * {@code io_method} (ConfigAdmin: {@code pageio:set}, {@code pageio:swap}), a method service that
 * comes or goes, and the fallback settings are applied live through
 * {@link AioContext#swapMethod}/{@link AioContext#retireMethod}: I/O in flight drains, the pool
 * and its cached pages stay. Any other configuration change restarts the component (disable, then
 * enable), as before. The data directory is the framework property {@code pageio.data}.
 *
 * <p>Threads: SCR calls bind, unbind, modified, activate and deactivate from its own threads or
 * from whichever thread registers or unregisters a method; every selection runs under
 * {@code this} (the selection lock), never held by a session. Lock order: selection lock, then the
 * AIO context's swap lock. Also registers {@code stat_io} as the MXBean
 * {@code org.pageio:type=StatIo} while active.
 */
@Component(service = BufferManager.class, configurationPid = "org.pageio.bufmgr", immediate = true)
@Designate(ocd = BufMgrConfig.class)
public final class BufferManagerComponent implements BufferManager {

    private static final System.Logger LOG = System.getLogger("org.pageio.bufmgr");

    /** Bound method services, best first (highest ranking, then lowest service id). */
    private final Map<ServiceReference<IoMethod>, IoMethod> methods = new ConcurrentSkipListMap<>(
            Comparator.<ServiceReference<IoMethod>>reverseOrder());

    private BufMgrSettings settings;
    private String dataDir;
    /** The parts, built and closed together; storage, aio and pool below are its. */
    private BufferManagerCore core;
    private StorageManager storage;
    private AioContext aio;
    private BufferPool pool;
    private ComponentContext componentContext;
    private BundleContext bundleContext;
    private StatIoMBean mbean;

    // Method selection; guarded by this.
    private Filter target;
    private String wanted;
    private String fallback;
    private long swapTimeoutNanos;
    private volatile MethodStatus status = new MethodStatus(null, null, null, false, 0, "not active", null, null, 0, 0);
    private MethodSwap lastSwap;
    private String lastFailure;
    private long swaps;
    private long failures;
    private boolean restarting;
    /**
     * Why this activation could not start the buffer manager (shared buffers that cannot be mapped,
     * a data directory others can write), or null while it runs. Written once in activate; volatile:
     * read by the service's methods on any thread.
     */
    private volatile String startFailure;

    @Reference(name = "methods", service = IoMethod.class, cardinality = ReferenceCardinality.AT_LEAST_ONE,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    void addMethod(ServiceReference<IoMethod> ref, IoMethod method) {
        methods.put(ref, method);
        synchronized (this) {
            if (aio != null) {
                select("io_method=" + method.name() + " registered");
            }
        }
    }

    void removeMethod(ServiceReference<IoMethod> ref, IoMethod method) {
        synchronized (this) {
            methods.remove(ref);
            if (aio != null) {
                select("io_method=" + method.name() + " is going away (bundle "
                        + ref.getBundle().getSymbolicName() + " stopped or the service was unregistered)");
            }
        }
    }

    @Activate
    void activate(BufMgrConfig config, BundleContext context, ComponentContext cc) {
        componentContext = cc;
        bundleContext = context;
        synchronized (this) {
            applyMethodConfig(config);
            IoMethod first = choose();
            boolean none = first == null;
            // io_method=direct at activation: relation files are opened with O_DIRECT. A method swapped in
            // later that bypasses the page cache: the core switches the storage manager before publishing it.
            boolean direct = !none && first.bypassesPageCache();
            try {
                settings = settingsOf(config, direct);
            } catch (IllegalArgumentException e) {
                // A stored value out of range (set around the console's checks): start anyway, on the defaults.
                LOG.log(System.Logger.Level.WARNING, "rejected configuration org.pageio.bufmgr: " + e.getMessage()
                        + "; starting the buffer manager with the default settings");
                BufMgrSettings.Builder defaults = new BufMgrSettings.Builder();
                defaults.directIo = direct;
                settings = defaults.build();
            }
            String warning = settings.combineLimitWarning();
            if (warning != null) {
                LOG.log(System.Logger.Level.WARNING, warning);
            }
            String data = context.getProperty("pageio.data");
            dataDir = data == null ? "data" : data;
            boolean unbound = false;
            if (none) {
                first = anyAvailable(); // the context needs a method object to start with; retired below
                unbound = first == null;
            }
            try {
                if (unbound) {
                    // Nothing registered can do I/O yet (io_uring blocked by seccomp, and the other
                    // method bundles not started): start with reads waiting at the gate; the first
                    // usable method that registers is bound by select().
                    String reason = "no I/O method is available yet (registered: " + describeMethods() + "); reads wait until "
                            + "io_method=" + wanted + (fallback.isEmpty() ? "" : " or io_method_fallback=" + fallback)
                            + " is registered and available";
                    core = BufferManagerCore.openUnbound(Path.of(dataDir), settings, methods.values().iterator().next(), reason);
                    LOG.log(System.Logger.Level.INFO, reason);
                } else {
                    core = BufferManagerCore.open(Path.of(dataDir), settings, first);
                }
            } catch (IllegalStateException | IllegalArgumentException | java.io.UncheckedIOException e) {
                // PostgreSQL's postmaster would exit with FATAL: here the container stays up so that the
                // setting can be fixed; the service stays registered and each method says why it cannot serve.
                notRunning(e.getMessage());
                return;
            } catch (RuntimeException e) {
                notRunning(e.toString()); // not one of ours: the stack trace too
                LOG.log(System.Logger.Level.ERROR, "the buffer manager did not start", e);
                return;
            }
            storage = core.storage();
            aio = core.aio();
            pool = core.pool();
            try {
                aio.setGateWaitTimeout(TimeUnit.MILLISECONDS.toNanos(config.io__method__wait__timeout()));
                aio.setHangWarning(TimeUnit.MILLISECONDS.toNanos(config.io__hang__warning()));
                core.startBackgroundWriter(new BgWriterSettings(config.bgwriter__delay(), config.bgwriter__lru__maxpages(),
                        config.bgwriter__lru__multiplier()));
            } catch (RuntimeException e) {
                core.close();
                throw e;
            }
            if (none && !unbound) {
                aio.retireMethod(null, 0, waitingReason());
                pool.methodSwapped();
            } else if (unbound) {
                pool.methodSwapped();
            } else if (!first.name().equals(wanted)) {
                LOG.log(System.Logger.Level.INFO, "io_method=" + wanted + " is not registered yet; reading with "
                        + "io_method_fallback=" + first.name() + " until it is");
            }
            publishStatus();
        }
        mbean = StatIoMBean.register(this);
    }

    /**
     * The start was refused: one ERROR line, and the service answers every use with
     * {@link #notRunning()} until a configuration change restarts it. Under this.
     */
    private void notRunning(String why) {
        startFailure = why;
        lastFailure = why;
        failures++;
        status = new MethodStatus(null, wanted, fallback, false, 0, "the buffer manager is not running: " + why, null, why,
                0, failures);
        LOG.log(System.Logger.Level.ERROR, "the buffer manager did not start: " + why);
    }

    /** The exception the service's methods throw while its start stands refused. */
    private IllegalStateException notRunning() {
        return new IllegalStateException("the buffer manager is not running: " + startFailure);
    }

    /**
     * A configuration change: {@code io_method} and the {@code io_method_*} settings apply live;
     * anything else restarts the component (disable + enable, so SCR deactivates the users first).
     */
    @Modified
    void modified(BufMgrConfig config, BundleContext context) {
        BufMgrSettings next;
        BgWriterSettings bg;
        try {
            next = settingsOf(config, settings.directIo()); // O_DIRECT follows the method, not a restart
            bg = new BgWriterSettings(config.bgwriter__delay(), config.bgwriter__lru__maxpages(),
                    config.bgwriter__lru__multiplier());
        } catch (IllegalArgumentException e) {
            // A value out of range that reached ConfigAdmin without the console's checks (e.g. the
            // Web Console's Configuration page): refuse it, keep everything in force, never throw
            // (SCR would deactivate the buffer manager).
            synchronized (this) { // fail() logs the one WARNING line
                fail("rejected configuration org.pageio.bufmgr: " + e.getMessage() + "; the settings in force stay");
            }
            return;
        }
        String data = context.getProperty("pageio.data");
        // A refused start is tried again at any change (the user fixed a setting, or changed another).
        if (core == null || !next.equals(settings) || !Objects.equals(data == null ? "data" : data, dataDir)) {
            synchronized (this) {
                restarting = true;
            }
            String name = (String) componentContext.getProperties().get("component.name");
            LOG.log(System.Logger.Level.INFO, "buffer manager settings changed: restarting the buffer manager");
            ComponentContext cc = componentContext;
            // Not from inside modified: SCR's disable waits for this very modification to end.
            Thread restart = new Thread(() -> {
                cc.disableComponent(name);
                cc.enableComponent(name);
            }, "pageio buffer manager restart");
            restart.setDaemon(true);
            restart.start();
            return;
        }
        synchronized (this) {
            if (core.startBackgroundWriter(bg)) { // bgwriter_* apply live, as on a reload in PostgreSQL
                LOG.log(System.Logger.Level.INFO, "background writer settings changed: bgwriter_delay = "
                        + bg.delayMillis() + "ms, bgwriter_lru_maxpages = " + bg.lruMaxPages() + ", bgwriter_lru_multiplier = "
                        + bg.lruMultiplier());
            }
            aio.setGateWaitTimeout(TimeUnit.MILLISECONDS.toNanos(config.io__method__wait__timeout()));
            aio.setHangWarning(TimeUnit.MILLISECONDS.toNanos(config.io__hang__warning()));
            try {
                applyMethodConfig(config);
            } catch (IllegalArgumentException e) {
                fail(e.getMessage());
                return;
            }
            select("io_method set to " + wanted);
        }
    }

    @Deactivate
    void deactivate() {
        StatIoMBean.unregister(mbean);
        mbean = null;
        synchronized (this) {
            if (core == null) { // the start was refused: nothing to stop
                return;
            }
            try {
                core.stopBackgroundWriter(); // its session drains its writes first
                shutdownCheckpoint();
            } finally {
                core.close(); // the AIO context fails, naming them, if sessions are still open
                aio = null;
                status = new MethodStatus(null, wanted, fallback, false, 0, "not active", lastSwap, lastFailure, swaps,
                        failures);
            }
        }
    }

    // ------------------------------------------------------------------ method selection

    static BufMgrSettings settingsOf(BufMgrConfig config, boolean directIo) {
        BufMgrSettings.Builder b = new BufMgrSettings.Builder();
        b.sharedBuffers = config.shared__buffers();
        b.effectiveIoConcurrency = config.effective__io__concurrency();
        b.maintenanceIoConcurrency = config.maintenance__io__concurrency();
        b.ioCombineLimit = config.io__combine__limit();
        b.ioMaxCombineLimit = config.io__max__combine__limit();
        b.ioMaxConcurrency = config.io__max__concurrency();
        b.zeroDamagedPages = config.zero__damaged__pages();
        b.ignoreChecksumFailure = config.ignore__checksum__failure();
        b.trackIoTiming = config.track__io__timing();
        b.readStreamLookahead = BufMgrSettings.Lookahead.valueOf(config.read__stream__lookahead().toUpperCase(Locale.ROOT));
        b.directIo = directIo;
        b.registeredBuffers = config.io__uring__registered__buffers();
        b.hugePages = BufMgrSettings.HugePages.parse(config.huge__pages());
        b.readStreamPolicy = BufMgrSettings.ReadStreamPolicy.parse(config.read__stream__policy());
        return b.build();
    }

    /** Reads io_method (the target filter), the fallback and the swap timeout. Under this. */
    private void applyMethodConfig(BufMgrConfig config) {
        String filter = config.ioMethod_target();
        try {
            target = FrameworkUtil.createFilter(filter);
        } catch (InvalidSyntaxException e) {
            throw new IllegalArgumentException("ioMethod.target '" + filter + "' is not a valid filter: " + e.getMessage()
                    + "; io_method stays " + wanted);
        }
        wanted = methodName(filter);
        String fb = config.io__method__fallback();
        fallback = fb == null ? "" : fb.trim();
        swapTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(config.io__method__swap__timeout());
    }

    /** {@code (io.method=NAME)} → NAME; any other filter as it is. */
    static String methodName(String filter) {
        String f = filter.trim();
        String prefix = "(" + IoMethod.PROPERTY + "=";
        if (f.startsWith(prefix) && f.endsWith(")") && f.indexOf('(', 1) < 0) {
            return f.substring(prefix.length(), f.length() - 1);
        }
        return f;
    }

    /** The method that should be bound: the best available one matching io_method, else the fallback, else null. */
    private IoMethod choose() {
        IoMethod fb = null;
        for (Map.Entry<ServiceReference<IoMethod>, IoMethod> e : methods.entrySet()) {
            IoMethod m = e.getValue();
            if (!available(m)) {
                continue;
            }
            if (target != null && target.match(e.getKey())) {
                return m;
            }
            if (fb == null && !fallback.isEmpty() && fallback.equals(e.getKey().getProperty(IoMethod.PROPERTY))) {
                fb = m;
            }
        }
        return fb;
    }

    private IoMethod anyAvailable() {
        for (IoMethod m : methods.values()) {
            if (available(m)) {
                return m;
            }
        }
        return null;
    }

    private static boolean available(IoMethod m) {
        try {
            IoMethod.Availability a = m.availability();
            return a != null && a.available();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    private boolean registered(IoMethod m) {
        return methods.containsValue(m);
    }

    /**
     * Binds what {@link #choose} says, if it is not bound already. Under this. Never throws (it runs
     * in SCR's bind, unbind and modified callbacks): a failure is logged and kept for the status.
     */
    private void select(String why) {
        if (aio == null || restarting || frameworkStopping()) {
            return; // stopping: the buffer manager is deactivated soon; no swaps (and no log lines) on the way out
        }
        IoMethod next = choose();
        IoMethod current = aio.methodBound() ? aio.method() : null;
        if (next == current && current != null) {
            publishStatus();
            return;
        }
        boolean currentGoing = current != null && !registered(current);
        try {
            MethodSwap swap;
            if (next == null) {
                if (current != null && !currentGoing) {
                    // io_method names a method that is not registered: keep the one in force until it is
                    fail("io_method=" + wanted + " is not registered (registered: " + describeMethods() + "); io_method stays "
                            + current.name() + " until it registers");
                    return;
                }
                if (current == null) {
                    publishStatus();
                    return;
                }
                swap = core.retireMethod(null, swapTimeoutNanos, waitingReason());
                LOG.log(System.Logger.Level.WARNING, why + "; " + waitingReason() + " (" + swap + ")");
            } else if (currentGoing || current == null) {
                swap = core.retireMethod(next, swapTimeoutNanos, null);
                LOG.log(System.Logger.Level.INFO, why + ": " + swap);
            } else {
                swap = core.swapMethod(next, swapTimeoutNanos); // the storage manager switches in the safe order
                LOG.log(System.Logger.Level.INFO, why + ": " + swap);
            }
            lastSwap = swap;
            if (current != null) {
                swaps++; // a first bind (nothing was bound) is not a swap
            }
            publishStatus();
        } catch (RuntimeException e) {
            fail(why + ": " + e.getMessage());
        }
    }

    private boolean frameworkStopping() {
        try {
            return bundleContext.getBundle(0).getState() == org.osgi.framework.Bundle.STOPPING;
        } catch (IllegalStateException e) {
            return true; // our context is no longer valid
        }
    }

    private void fail(String message) {
        LOG.log(System.Logger.Level.WARNING, message);
        lastFailure = message;
        failures++;
        publishStatus();
    }

    private String waitingReason() {
        return "no I/O method is bound: io_method=" + wanted + " is not registered"
                + (fallback.isEmpty() ? " and io_method_fallback is empty" : " and io_method_fallback=" + fallback + " is not either")
                + "; reads wait until one of them registers";
    }

    private String describeMethods() {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<ServiceReference<IoMethod>, IoMethod> e : methods.entrySet()) {
            if (b.length() > 0) {
                b.append(", ");
            }
            b.append(e.getKey().getProperty(IoMethod.PROPERTY));
            if (!available(e.getValue())) {
                b.append(" (not available)");
            }
        }
        return b.length() == 0 ? "none" : b.toString();
    }

    /** Under this. */
    private void publishStatus() {
        if (aio == null) {
            return;
        }
        boolean bound = aio.methodBound();
        String m = bound ? aio.method().name() : null;
        status = new MethodStatus(m, wanted, fallback, bound && !m.equals(wanted), aio.methodEpoch(),
                bound ? null : aio.gateClosedReason(), lastSwap, lastFailure, swaps, failures);
    }

    // ------------------------------------------------------------------ the service

    /** PostgreSQL's shutdown checkpoint: dirty buffers reach the disk before the pool goes away. */
    private void shutdownCheckpoint() {
        if (pool.dirtyBuffers() == 0) {
            return;
        }
        try {
            LOG.log(System.Logger.Level.INFO, "shutdown " + pool.checkpoint());
        } catch (java.io.IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "shutdown checkpoint failed, changes in dirty buffers are lost: " + e.getMessage());
        }
    }

    /** The pool; while the start stands refused, an IllegalStateException saying why and what to do. */
    @Override
    public BufferPool pool() {
        BufferPool p = pool;
        if (p == null) {
            throw notRunning();
        }
        return p;
    }

    /** The storage manager; while the start stands refused, an IllegalStateException saying why and what to do. */
    @Override
    public StorageManager storage() {
        StorageManager s = storage;
        if (s == null) {
            throw notRunning();
        }
        return s;
    }

    @Override
    public BufMgrSettings settings() {
        return settings;
    }

    @Override
    public MethodStatus methodStatus() {
        return status;
    }
}
