package org.pageio.bufmgr;

import java.nio.file.Path;
import java.util.function.Supplier;
import org.pageio.api.AioContext;
import org.pageio.api.IoMethod;
import org.pageio.api.MethodSwap;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;

/**
 * The buffer manager's parts, built in one place and closed in one place: the storage manager
 * under a data directory, the AIO context on an I/O method, the shared buffer pool and its
 * {@code stat_io} counters. The OSGi component builds its service on one; the drill and the
 * benchmarks open one directly, so that they measure the pool a user runs.
 *
 * <p>It owns what it built: {@link #close} closes the AIO context (which refuses while sessions
 * are open, naming them), then the pool, then the storage manager. The I/O method is not owned:
 * its bundle (or whoever created it) stops it. Thread-safe as its parts are; close once, after
 * every session closed.
 */
public final class BufferManagerCore implements BufferManager, AutoCloseable {

    private final StorageManager storage;
    /** Whether {@link #close} closes {@link #storage} (it was opened here). */
    private final boolean ownsStorage;
    private final AioContext aio;
    private final BufferPool pool;
    /** The background writer, or null when none runs. Guarded by this. */
    private BackgroundWriter bgwriter;

    private BufferManagerCore(StorageManager storage, boolean ownsStorage, AioContext aio, BufferPool pool) {
        this.storage = storage;
        this.ownsStorage = ownsStorage;
        this.aio = aio;
        this.pool = pool;
    }

    /**
     * Opens the storage manager under {@code dataDir} (relation files with O_DIRECT when
     * {@link BufMgrSettings#directIo}), an AIO context on {@code method} sized by the settings, and a
     * pool of {@code shared_buffers} on them. What was built is closed again if a later part fails.
     *
     * @throws IllegalStateException when the method is not available or the pool's memory cannot be mapped,
     *         with the reason
     */
    public static BufferManagerCore open(Path dataDir, BufMgrSettings settings, IoMethod method) {
        return openWith(dataDir, settings, () -> AioContext.create(method, settings.aioConfig()));
    }

    /**
     * As {@link #open}, with no method bound yet ({@link AioContext#createUnbound}): reads wait at
     * the AIO context's gate for {@code reason} until the caller binds an available method.
     * {@code named} lends its name to views meanwhile and is never asked to do I/O.
     */
    public static BufferManagerCore openUnbound(Path dataDir, BufMgrSettings settings, IoMethod named, String reason) {
        return openWith(dataDir, settings, () -> AioContext.createUnbound(named, settings.aioConfig(), reason));
    }

    /**
     * As {@link #open}, on a storage manager the caller owns and keeps open (several pools over the
     * same files, as the loader's tests compare sinks); {@link #close} leaves it open.
     */
    public static BufferManagerCore on(StorageManager storage, BufMgrSettings settings, IoMethod method) {
        return assemble(storage, false, settings, () -> AioContext.create(method, settings.aioConfig()));
    }

    private static BufferManagerCore openWith(Path dataDir, BufMgrSettings settings, Supplier<AioContext> aio) {
        StorageManager storage = new StorageManager(dataDir, settings.segmentBlocks(), settings.directIo());
        try {
            return assemble(storage, true, settings, aio);
        } catch (RuntimeException e) {
            storage.close();
            throw e;
        }
    }

    private static BufferManagerCore assemble(StorageManager storage, boolean owns, BufMgrSettings settings,
            Supplier<AioContext> newAio) {
        AioContext aio = newAio.get();
        try {
            return new BufferManagerCore(storage, owns, aio, new BufferPool(settings, storage, aio, new StatIo()));
        } catch (RuntimeException e) {
            aio.close();
            throw e;
        }
    }

    @Override
    public BufferPool pool() {
        return pool;
    }

    @Override
    public StorageManager storage() {
        return storage;
    }

    @Override
    public BufMgrSettings settings() {
        return pool.settings();
    }

    /** The AIO context the pool reads and writes through (its method can be swapped live). */
    public AioContext aio() {
        return aio;
    }

    /** The pool's {@code stat_io} counters. */
    public StatIo stats() {
        return pool.stats();
    }

    /** The method bound now; no fallback, no swaps but those made on {@link #aio} by the caller. */
    @Override
    public MethodStatus methodStatus() {
        boolean bound = aio.methodBound();
        String m = bound ? aio.method().name() : null;
        return new MethodStatus(m, m, "", false, aio.methodEpoch(), bound ? null : aio.gateClosedReason(), null, null,
                0, 0);
    }

    /**
     * Swaps the pool's method live ({@link AioContext#swapMethod}) in the order of publication the
     * storage manager needs, and tells the pool ({@link BufferPool#methodSwapped}). Entering a method
     * that bypasses the page cache, the storage manager switches first (the flag for new opens and
     * every open descriptor to O_DIRECT, {@link StorageManager#setDirectIo}), and only then is the
     * method published: its first read sees only O_DIRECT descriptors. Leaving it, the buffered
     * method is published first, then the descriptors go back to buffered: the direct method never
     * reads a buffered descriptor, a buffered one may read an O_DIRECT one for a moment (same bytes).
     * A swap that fails (timeout: the old method stays) switches the storage manager back. Any thread
     * but a session's owner in a batch; swaps are serialised by the caller.
     *
     * @throws IllegalArgumentException when {@code next} is not available (nothing changes)
     * @throws IllegalStateException on timeout (nothing changes)
     */
    public MethodSwap swapMethod(IoMethod next, long timeoutNanos) {
        return switchMethod(next, () -> aio.swapMethod(next, timeoutNanos));
    }

    /**
     * {@link AioContext#retireMethod} (the bound method is going away; {@code next == null}: none)
     * in the same order of publication as {@link #swapMethod}.
     */
    public MethodSwap retireMethod(IoMethod next, long timeoutNanos, String reason) {
        return switchMethod(next, () -> aio.retireMethod(next, timeoutNanos, reason));
    }

    private MethodSwap switchMethod(IoMethod next, Supplier<MethodSwap> swap) {
        boolean direct = next != null && next.bypassesPageCache();
        boolean entering = direct && !storage.directIo();
        if (entering) {
            if (!next.availability().available()) { // refused below; leave the descriptors as they are
                return swap.get();
            }
            storage.setDirectIo(true); // before the publication: the new method sees O_DIRECT descriptors only
        }
        MethodSwap done;
        try {
            done = swap.get();
        } catch (RuntimeException e) {
            if (entering) {
                storage.setDirectIo(false); // the old, buffered method stays
            }
            throw e;
        }
        pool.methodSwapped();
        if (!direct && storage.directIo()) {
            storage.setDirectIo(false); // after the publication: the leaving method saw O_DIRECT to its end
        }
        return done;
    }

    /**
     * Starts the background writer with {@code settings}, or replaces the running one when its
     * settings differ (its session drains its writes first): {@code bgwriter_*} apply live, as a
     * reload applies them in PostgreSQL. Returns whether a writer was started. No writer runs until
     * this is called (the drill and the benchmarks run without one).
     */
    public synchronized boolean startBackgroundWriter(BgWriterSettings settings) {
        if (bgwriter != null) {
            if (bgwriter.settings().equals(settings)) {
                return false;
            }
            bgwriter.close();
        }
        bgwriter = new BackgroundWriter(pool, settings);
        return true;
    }

    /** Stops the background writer, if one runs; it drains its writes first. */
    public synchronized void stopBackgroundWriter() {
        if (bgwriter != null) {
            bgwriter.close();
            bgwriter = null;
        }
    }

    /**
     * Stops the background writer, closes the AIO context (it refuses, naming them, while sessions are open: then the pool's
     * memory stays mapped for them), then frees the pool's memory; the storage manager is closed in
     * any case.
     */
    @Override
    public void close() {
        try {
            stopBackgroundWriter();
            aio.close();
            pool.close();
        } finally {
            if (ownsStorage) {
                storage.close();
            }
        }
    }
}
