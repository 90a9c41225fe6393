package org.pageio.itest;

import javax.inject.Inject;
import org.ops4j.pax.exam.util.Filter;
import org.pageio.api.IoMethod;
import org.pageio.tck.MethodConformanceKit;

/** {@code io_method=sync} passes the method conformance kit. */
public class SyncConformanceIT extends MethodConformanceKit {

    @Inject
    @Filter("(io.method=sync)")
    private IoMethod sync;

    @Override
    protected IoMethod method() {
        return sync;
    }
}
