package org.example.pageio.vthread;

import java.lang.foreign.Arena;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadFactory;

import org.osgi.service.component.annotations.Component;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;

/**
 * {@code io_method=vthread}, an example third-party method that does its own I/O: {@link #submit}
 * starts one virtual thread per I/O, which runs the blocking system call ({@code preadv},
 * {@code pwritev}, {@code fsync}, {@code fdatasync} through {@code org.pageio.posix.Posix}, by
 * {@link IoHandle#performSynchronously}) and completes the handle, running its shared completion
 * callbacks in that virtual thread. I/O flagged synchronous runs inline in the issuer (the
 * default {@link IoMethod#performSynchronously}).
 *
 * <p>Rules it keeps: each handle is completed exactly once, by the virtual thread it was given to,
 * which touches the handle no more afterwards (the owner may reclaim and reuse it at once); an
 * error is the call's {@code -errno} in the result, never an exception; a thread that cannot be
 * started fails its I/O with {@code EAGAIN}. As an I/O runs after {@code submit} returns, the core
 * must wait for it before a descriptor it uses is closed ({@link #waitOnFdBeforeClose}). Waiters
 * sleep on the handle ({@code hasWaitOne} stays false): every I/O completes without their help.
 * No per-session state; nothing to stop: an I/O in flight when the component is deactivated
 * finishes on its thread.
 *
 * <p>A virtual thread blocked in a native call (an FFM downcall) pins its carrier thread: at most
 * as many of these I/Os run at once as the virtual-thread scheduler has carriers (by default one
 * per CPU), and while they block, no other virtual thread in the JVM runs on those carriers.
 */
@Component(service = IoMethod.class, property = IoMethod.PROPERTY + "=" + VThreadIoMethod.NAME)
public final class VThreadIoMethod implements IoMethod {

    public static final String NAME = "vthread";

    private final ThreadFactory threads = Thread.ofVirtual().name("pageio vthread I/O").factory();
    /**
     * errno capture areas for the virtual threads: taken by an I/O's thread, given back when it has
     * completed; as many as I/Os ever ran at once. Freed by the garbage collector with this object.
     */
    private final ConcurrentLinkedQueue<CallState> callStates = new ConcurrentLinkedQueue<>();
    private final Arena arena = Arena.ofAuto();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int submit(IoHandle[] handles, int count) {
        for (int i = 0; i < count; i++) {
            IoHandle h = handles[i];
            try {
                threads.newThread(() -> perform(h)).start();
            } catch (Throwable e) { // OutOfMemoryError "unable to create native thread" and its kind: a result
                h.fail(-Errno.EAGAIN, new IllegalStateException("io_method=" + NAME + " could not start a virtual"
                        + " thread for the I/O: " + e, e));
            }
        }
        return count;
    }

    /** Runs one I/O in its virtual thread and completes it ({@link IoHandle#performSynchronously} never throws). */
    private void perform(IoHandle h) {
        CallState cs = callStates.poll();
        if (cs == null) {
            cs = CallState.allocate(arena); // an automatic arena is shared: any thread may allocate
        }
        try {
            h.performSynchronously(cs);
        } finally {
            callStates.offer(cs);
        }
    }

    /** An I/O runs in its own thread after {@link #submit} returned: its descriptor must stay open until it ends. */
    @Override
    public boolean waitOnFdBeforeClose() {
        return true;
    }
}
