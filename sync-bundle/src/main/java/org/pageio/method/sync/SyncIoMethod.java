package org.pageio.method.sync;

import org.osgi.service.component.annotations.Component;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;

/**
 * {@code io_method=sync}: every I/O is executed inline by the issuer, at staging, with
 * preadv/pwritev/fsync (PostgreSQL's method_sync.c). It exists to run the asynchronous code path
 * without asynchrony, and as the baseline every other method is measured against.
 *
 * <p>Because {@link #needsSynchronousExecution} is always true, the core never calls
 * {@link #submit}; reaching it is a bug in the core, reported as such.
 */
@Component(service = IoMethod.class, property = IoMethod.PROPERTY + "=" + SyncIoMethod.NAME)
public final class SyncIoMethod implements IoMethod {

    public static final String NAME = "sync";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean needsSynchronousExecution(IoHandle handle) {
        return true;
    }

    @Override
    public int submit(IoHandle[] handles, int count) {
        throw new IllegalStateException("io_method=sync executes every I/O at staging; submit("
                + count + " handles) was reached, which is a bug in the AIO core");
    }
}
