package org.pageio.itest;

import static org.ops4j.pax.exam.CoreOptions.composite;

import java.util.LinkedHashMap;
import java.util.Map;
import javax.inject.Inject;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.util.Filter;
import org.pageio.api.IoMethod;

/**
 * A container with every method this machine has (sync, worker, io_uring, direct, posix_aio) and the fault
 * bundle, for tests that run the same case over each of them.
 */
public abstract class EveryMethodTestBase extends PageioTestBase {

    @Inject @Filter("(io.method=sync)") protected IoMethod sync;
    @Inject @Filter("(io.method=worker)") protected IoMethod worker;
    @Inject @Filter("(io.method=io_uring)") protected IoMethod uring;
    @Inject @Filter("(io.method=direct)") protected IoMethod direct;
    @Inject @Filter("(io.method=posix_aio)") protected IoMethod posixAio;

    @Override
    protected Option extraOptions() {
        return composite(reactorBundle("uring-bundle"), reactorBundle("directio-bundle"), reactorBundle("posixaio-bundle"));
    }

    /** The methods by name, in a fixed order. */
    protected Map<String, IoMethod> methods() {
        Map<String, IoMethod> m = new LinkedHashMap<>();
        m.put("sync", sync);
        m.put("worker", worker);
        m.put("io_uring", uring);
        m.put("direct", direct);
        m.put("posix_aio", posixAio);
        return m;
    }
}
