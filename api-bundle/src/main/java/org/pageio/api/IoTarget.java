package org.pageio.api;

import java.nio.file.Path;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * What an I/O is about, for messages: a file, or a relation's blocks (PostgreSQL's AIO target,
 * {@code PGAIO_TID_SMGR}). A target is a long-lived object (one per open file or relation); the
 * per-I/O part is one {@code long} of target data set on the handle, so naming a target allocates
 * nothing. Only error paths call {@link #describe}.
 *
 * <p>Implementations must be thread-safe: {@code describe} may run in any thread.
 */
@ConsumerType
public interface IoTarget {

    /** Describes the object of an I/O, e.g. {@code relation 16384 block 7}. */
    String describe(long targetData);

    /** A target that names a plain file; the target data is ignored. */
    static IoTarget file(Path path) {
        String name = "file " + path;
        return data -> name;
    }

    /** For handles nobody described. */
    IoTarget UNKNOWN = data -> "an unnamed target";
}
