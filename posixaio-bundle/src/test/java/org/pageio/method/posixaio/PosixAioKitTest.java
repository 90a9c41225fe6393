package org.pageio.method.posixaio;

import org.pageio.api.IoMethod;
import org.pageio.tck.InProcessMethodKit;

/**
 * The method conformance kit in process, every one of its tests on {@code io_method=posix_aio}
 * over glibc's POSIX AIO (the container run is {@code itest}'s {@code PosixAioConformanceIT}).
 */
class PosixAioKitTest extends InProcessMethodKit {

    @Override
    protected IoMethod newMethod() {
        return new PosixAioIoMethod(PosixAioSettings.DEFAULTS);
    }
}
