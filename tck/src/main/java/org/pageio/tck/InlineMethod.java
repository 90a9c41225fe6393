package org.pageio.tck;

import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;

/**
 * {@code io_method=kit_inline}: executes every I/O inline in the issuer, as {@code sync} does, but
 * lives in the kit, so that the kit can switch a context away from the method under test (and
 * back) in any container, whatever methods it has — also when the method under test is
 * {@code sync} and its bundle is the one being stopped.
 */
final class InlineMethod implements IoMethod {

    static final String NAME = "kit_inline";

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
        throw new IllegalStateException("io_method=" + NAME + " executes every I/O at staging; submit(" + count
                + " handles) was reached, which is a bug in the AIO core");
    }
}
