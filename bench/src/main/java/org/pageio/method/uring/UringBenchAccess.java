package org.pageio.method.uring;

import org.pageio.api.IoMethod;

/**
 * The benchmark's door to the package-private {@code IOSQE_ASYNC} switch of
 * {@link UringIoMethod} (same package, on the plain class path; not part of any bundle).
 */
public final class UringBenchAccess {

    private UringBenchAccess() {
    }

    /** An activated {@code io_uring} method with the policy named {@code NEVER}, {@code PG18} or {@code PG19}. */
    public static IoMethod create(String forceAsync) {
        UringIoMethod m = new UringIoMethod(UringIoMethod.ForceAsync.valueOf(forceAsync));
        m.activate();
        return m;
    }

    /** The policy the bundle uses by default. */
    public static String defaultPolicy() {
        return UringIoMethod.DEFAULT_FORCE_ASYNC.name();
    }
}
