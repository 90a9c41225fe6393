package org.example.pageio.ratelimit;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;
import org.pageio.api.ForwardingIoMethod;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.posix.CallState;

/**
 * {@code io_method=ratelimit}, an example third-party method: a decorator that lets at most
 * {@code iops} I/Os per second through to another method ({@code sync} by default), with a burst
 * of {@code burst}. The issuer waits for a token before an I/O starts, which is how a rate limit
 * slows a reader down; everything else (sessions, waiting, completion) is the delegate's, forwarded
 * by {@link ForwardingIoMethod}.
 *
 * <p>Built against pageio's API packages only, with its own pom, and checked with
 * {@code ./pageio tck examples/ratelimit-method/target/ratelimit-method-1.0.0.jar}.
 */
@Component(service = IoMethod.class, property = IoMethod.PROPERTY + "=" + RateLimitMethod.NAME,
        configurationPid = "org.example.pageio.ratelimit")
@Designate(ocd = RateLimitConfig.class)
public final class RateLimitMethod extends ForwardingIoMethod {

    public static final String NAME = "ratelimit";

    @Reference(name = "delegate", target = "(io.method=sync)")
    private IoMethod delegate;

    private long nanosPerIo;
    private long burstNanos;
    /** The time at which the bucket is empty again; guarded by {@code this}. */
    private long emptyAt;

    @Activate
    void activate(RateLimitConfig config) {
        nanosPerIo = TimeUnit.SECONDS.toNanos(1) / Math.max(1, config.iops());
        burstNanos = nanosPerIo * Math.max(1, config.burst());
        emptyAt = System.nanoTime() - burstNanos;
    }

    /** Takes {@code n} tokens, sleeping until they are there. Any issuer thread. */
    private void take(int n) {
        long wait;
        synchronized (this) {
            long now = System.nanoTime();
            emptyAt = Math.max(emptyAt, now - burstNanos) + n * nanosPerIo;
            wait = emptyAt - now - burstNanos;
        }
        while (wait > 0) {
            long until = System.nanoTime() + wait;
            LockSupport.parkNanos(wait);
            wait = until - System.nanoTime();
        }
    }

    @Override
    protected IoMethod delegate() {
        return delegate;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void performSynchronously(IoHandle handle, CallState callState) {
        take(1);
        delegate.performSynchronously(handle, callState);
    }

    @Override
    public int submit(IoHandle[] handles, int count) {
        take(count);
        return delegate.submit(handles, count);
    }
}
