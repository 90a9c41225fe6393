package org.pageio.bufmgr;

import org.osgi.annotation.versioning.ProviderType;
import org.pageio.bufmgr.smgr.StorageManager;

/**
 * The buffer manager as an OSGi service: the pool, the storage manager under the data
 * directory, and the I/O method the pool reads through (the one {@code io_method} selected when
 * the service was activated). Other bundles (tables, console) open sessions on it.
 *
 * <p>Thread-safe. When {@code io_method} changes, or the method's bundle stops, the method is
 * swapped live (hot swap): I/O in flight drains, the pool and its cached pages stay, sessions go on
 * with the new method. When another setting changes, the service is unregistered and registered
 * anew: a user that keeps a reference across that sees a closed pool.
 *
 * <p>When its start was refused ({@code shared_buffers} this machine cannot map, a data directory
 * others can write), the service is registered without a pool: {@link #pool()} and
 * {@link #storage()} throw an {@link IllegalStateException} whose one-line message says why and
 * what to do, and {@link #methodStatus()} gives the same reason as {@code waiting}.
 */
@ProviderType
public interface BufferManager {

    BufferPool pool();

    StorageManager storage();

    BufMgrSettings settings();

    /** The I/O method in force, what {@code io_method} asks for, and the last swap. */
    MethodStatus methodStatus();

    /**
     * Writes every dirty buffer in file order, fsyncs every segment written since the last
     * checkpoint, and only then returns; shorthand for {@code pool().checkpoint()}.
     *
     * @throws java.io.IOException naming relation, block (or file) and errno when a write or an
     *         fsync fails
     */
    default CheckpointResult checkpoint() throws java.io.IOException {
        return pool().checkpoint();
    }

    /** Opens a session for the calling thread; shorthand for {@code pool().openSession(kind)}. */
    default BufferSession openSession(String kind) {
        return pool().openSession(kind);
    }
}
