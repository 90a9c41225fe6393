package org.pageio.measure.drill;

import java.io.IOException;
import java.nio.file.Path;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.pgdata.PgCluster;
import org.pageio.table.TableService;
import org.pageio.table.TableServices;

/**
 * The one place where the drill builds its storage managers and buffer managers (AIO core,
 * pool, stat_io): the settings, the loader's buffer manager and each method's {@link Rig} (over a
 * PostgreSQL cluster, {@code --pgdata}: its {@link PgRig}).
 * Called from the drill's thread only.
 */
final class DrillPools {

    private final DrillOptions opts;
    private final BufMgrSettings settings;

    DrillPools(DrillOptions opts) {
        this.opts = opts;
        this.settings = new BufMgrSettings.Builder().sharedBuffers(opts.sharedBuffers()).segmentBlocks(opts.segmentBlocks())
                .trackIoTiming(true).build();
    }

    /** The buffer manager settings every pool of the drill is built with. */
    BufMgrSettings settings() {
        return settings;
    }

    /** A storage manager over the data directory; the caller closes it. */
    StorageManager storageManager() {
        return new StorageManager(opts.dataDir(), opts.segmentBlocks(), false);
    }

    /** The loader's buffer manager over {@code smgr} (not closed with it); the caller closes it. */
    BufferManagerCore loader(StorageManager smgr, IoMethod loader) throws IOException {
        return BufferManagerCore.on(smgr, settings, loader);
    }

    /** A new rig for method {@code m}; the caller closes it. */
    Rig rig(IoMethod m) throws IOException {
        return new Rig(m, settings);
    }

    /** A new rig for method {@code m} with a pool of {@code sharedBuffers} blocks; the caller closes it. */
    Rig rig(IoMethod m, int sharedBuffers) throws IOException {
        return new Rig(m, sharedBuffers == settings.sharedBuffers() ? settings
                : settings.toBuilder().sharedBuffers(sharedBuffers).build());
    }

    /** A new rig for method {@code m} over the stopped PostgreSQL cluster in {@code pgdata}; the caller closes it. */
    PgRig pgRig(IoMethod m, Path pgdata) throws IOException {
        return new PgRig(m, pgdata);
    }

    /**
     * The pool that keeps a table of {@code blocks} whole in shared buffers, as PostgreSQL would:
     * its sequential scan reads through the bulk-read ring only when the table is bigger than a
     * quarter of {@code shared_buffers}, so at least 4 × {@code blocks}, and never less than the
     * drill's own pool.
     */
    int hotSharedBuffers(long blocks) {
        return (int) Math.max(settings.sharedBuffers(), Math.min(Integer.MAX_VALUE, 4 * blocks));
    }

    /**
     * One method's storage manager, AIO core, buffer pool and table service, kept for every run of
     * that method in the drill (one 256MB pool per method instead of one allocated and zeroed per
     * run). Its own storage manager: a method may change a descriptor's mode, as {@code direct}
     * switches it to O_DIRECT, and must not change how another method reads.
     */
    final class Rig implements AutoCloseable {
        /** The buffer manager as a user runs one: storage manager, AIO core, pool, stat_io. */
        final BufferManagerCore bufmgr;
        final StorageManager smgr;
        final StatIo stats;
        final BufferPool pool;
        final TableService tables;

        Rig(IoMethod m, BufMgrSettings with) throws IOException {
            bufmgr = BufferManagerCore.open(opts.dataDir(), with, m);
            try {
                tables = TableServices.over(bufmgr.pool());
            } catch (IOException | RuntimeException | Error e) {
                bufmgr.close();
                throw e;
            }
            smgr = bufmgr.storage();
            stats = bufmgr.stats();
            pool = bufmgr.pool();
        }

        /**
         * Empties shared buffers ({@link BufferPool#evictAll}) and zeroes stat_io. Nothing is dirty
         * or pinned between runs; a buffer left would be a leak, and the run would not start empty.
         */
        void empty(String method) throws IOException {
            BufferPool.EvictAllResult e;
            try (var s = pool.openSession("client")) {
                e = pool.evictAll(s);
            }
            if (e.skipped() != 0) {
                throw new IllegalStateException("io_method=" + method + ": shared buffers could not be emptied before the run: "
                        + e.skipped() + " buffer(s) still pinned or dirty");
            }
            stats.reset();
        }

        @Override
        public void close() {
            bufmgr.close();
        }
    }

    /**
     * One method's rig over a stopped PostgreSQL cluster ({@code --pgdata}): the cluster opened
     * read-only with a storage manager of its own (as {@link Rig}'s: a method may change a
     * descriptor's mode) and a buffer manager on it with the drill's settings, kept for every run of
     * that method.
     */
    final class PgRig implements AutoCloseable {
        final PgCluster cluster;
        final BufferManagerCore bufmgr;

        PgRig(IoMethod m, Path pgdata) throws IOException {
            cluster = PgCluster.open(pgdata);
            try {
                bufmgr = cluster.openBufferManager(m, settings);
            } catch (RuntimeException | Error e) {
                cluster.close();
                throw e;
            }
        }

        /** Empties shared buffers and zeroes stat_io, as {@link Rig#empty}. */
        void empty(String method) throws IOException {
            BufferPool.EvictAllResult e;
            try (var s = bufmgr.pool().openSession("client")) {
                e = bufmgr.pool().evictAll(s);
            }
            if (e.skipped() != 0) {
                throw new IllegalStateException("io_method=" + method + ": shared buffers could not be emptied before the run: "
                        + e.skipped() + " buffer(s) still pinned or dirty");
            }
            bufmgr.stats().reset();
        }

        @Override
        public void close() {
            bufmgr.close();
            cluster.close();
        }
    }
}
