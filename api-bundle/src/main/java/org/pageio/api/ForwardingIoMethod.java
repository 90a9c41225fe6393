package org.pageio.api;

import org.osgi.annotation.versioning.ConsumerType;
import org.pageio.posix.CallState;

/**
 * An {@link IoMethod} that forwards every operation to another method: the base for decorators
 * (fault injection, rate limits, tracing) that change one or two operations and leave the rest,
 * sessions, waiting, completion, to the method they wrap. Like Lucene's {@code FilterDirectory}.
 *
 * <p>Every operation of {@link IoMethod}, including the optional ones with defaults, is forwarded
 * here, so a decorator does not silently fall back to a default the wrapped method overrides (a
 * decorator over {@code direct} that forgot {@link #bypassesPageCache} would make the buffer
 * manager open files buffered). When {@link IoMethod} gains an operation, it is forwarded here in
 * the same version ({@code ForwardingIoMethodTest} fails until it is).
 *
 * <p>{@link #name()} is not forwarded: a decorator registers under its own {@code io.method}.
 * Threads: as {@link IoMethod}; {@link #delegate()} must be safe to call from every thread that
 * calls an operation (a final field, or one written before the service is registered).
 *
 * @since 1.4.0
 */
@ConsumerType
public abstract class ForwardingIoMethod implements IoMethod {

    /** The method operations are forwarded to. */
    protected abstract IoMethod delegate();

    @Override
    public Availability availability() {
        return delegate().availability();
    }

    @Override
    public Object openSession(IoSession session) {
        return delegate().openSession(session);
    }

    @Override
    public void closeSession(IoSession session, Object methodState) {
        delegate().closeSession(session, methodState);
    }

    @Override
    public boolean needsSynchronousExecution(IoHandle handle) {
        return delegate().needsSynchronousExecution(handle);
    }

    @Override
    public void performSynchronously(IoHandle handle, CallState callState) {
        delegate().performSynchronously(handle, callState);
    }

    @Override
    public int submit(IoHandle[] handles, int count) {
        return delegate().submit(handles, count);
    }

    @Override
    public boolean hasWaitOne() {
        return delegate().hasWaitOne();
    }

    @Override
    public void waitOne(IoHandle handle, long generation) {
        delegate().waitOne(handle, generation);
    }

    @Override
    public void waitProgress(IoHandle handle, long generation, int max) {
        delegate().waitProgress(handle, generation, max);
    }

    @Override
    public int readyCompletions(IoSession session) {
        return delegate().readyCompletions(session);
    }

    @Override
    public void checkOne(IoHandle handle, long generation) {
        delegate().checkOne(handle, generation);
    }

    @Override
    public boolean waitOnFdBeforeClose() {
        return delegate().waitOnFdBeforeClose();
    }

    @Override
    public boolean bypassesPageCache() {
        return delegate().bypassesPageCache();
    }

    @Override
    public boolean readsHoldThreads() {
        return delegate().readsHoldThreads();
    }
}
