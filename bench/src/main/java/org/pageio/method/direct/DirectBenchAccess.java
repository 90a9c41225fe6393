package org.pageio.method.direct;

import org.pageio.api.IoMethod;

/**
 * The benchmark's door to {@link DirectIoMethod}'s package-private engine start (same package, on
 * the plain class path; not part of any bundle).
 */
public final class DirectBenchAccess {

    private DirectBenchAccess() {
    }

    /** A started {@code direct} method with engine {@code io_uring}, {@code threads} or {@code auto}. */
    public static IoMethod create(String engine) {
        DirectIoMethod m = new DirectIoMethod();
        m.start(engine, 16);
        if (!m.availability().available()) {
            throw new IllegalStateException(m.availability().cause());
        }
        return m;
    }

    /** Stops the threads engine, if any. */
    public static void stop(IoMethod m) {
        ((DirectIoMethod) m).deactivate();
    }

    /**
     * The rings' counters of the sessions closed so far: {sessions, submit enters, SQEs submitted,
     * blocking wait enters, polls, polls that found a completion, in-flight-at-submit sum,
     * submissions sampled}.
     */
    public static long[] ringTotals(IoMethod m) {
        return ((DirectIoMethod) m).ringTotals();
    }

    /** Which engine runs. */
    public static String engine(IoMethod m) {
        return ((DirectIoMethod) m).engine().toString();
    }
}
