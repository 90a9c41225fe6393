package org.pageio.uring;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.pageio.uring.Abi.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pageio.api.AioContext;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;
import org.pageio.posix.Iovec;
import org.pageio.posix.Posix;

/**
 * A ring's registered ("fixed") buffers: follows the region the context offers
 * ({@link AioContext#registeredBuffers}), registers it with {@code IORING_REGISTER_BUFFERS} in
 * parts of at most 1 GiB, and tells the submitter which part holds a single-buffer I/O, so that
 * it goes in as {@code READ_FIXED}/{@code WRITE_FIXED}. Owner thread only (or the ring's
 * constructor, before anybody knows the ring), except {@link #note()}, which is volatile.
 */
final class RegisteredBuffers {

    private final int ringFd;
    private final AioContext context;
    /**
     * The region the context offered when this ring last looked, registered or not; its bounds
     * while registered ({@code fixedBase} -1 otherwise); I/Os prepared as
     * {@code READ_FIXED}/{@code WRITE_FIXED}.
     */
    private MemorySegment fixedSeen;
    private long fixedBase = -1;
    private long fixedEnd = -1;
    private long fixedIos;
    /** Whether the ring uses registered buffers, and why not. Volatile: read by views, written by the owner. */
    private volatile String fixedNote = "off: no region offered";

    RegisteredBuffers(int ringFd, AioContext context) {
        this.ringFd = ringFd;
        this.context = context;
    }

    /**
     * The registered buffer that holds all of {@code [addr, addr + len)}, or -1: the I/O is then
     * prepared as a plain {@code READ}/{@code WRITE}. Follows the context's offer first (a new
     * region is registered, a withdrawn one released, here in the owner thread, so at most once
     * per change), and never uses a region whose memory was freed. Counts a hit as a fixed I/O.
     */
    int indexFor(long addr, int len, CallState cs) {
        MemorySegment offered = context == null ? null : context.registeredBuffers(); // volatile read
        if (offered != fixedSeen) {
            refresh(offered, cs);
        }
        if (fixedBase < 0 || addr < fixedBase || addr + len > fixedEnd || len <= 0) {
            return -1;
        }
        if (!fixedSeen.scope().isAlive()) {
            // freed without being withdrawn: its addresses may now be someone else's memory
            refresh(null, cs);
            fixedNote = "off: the registered region was freed without being withdrawn";
            return -1;
        }
        long rel = addr - fixedBase;
        int first = (int) (rel / MAX_FIXED_BUFFER_BYTES);
        if (first != (int) ((rel + len - 1) / MAX_FIXED_BUFFER_BYTES)) {
            return -1;
        }
        fixedIos++;
        return first;
    }

    /**
     * Releases this ring's registration, if any, and registers {@code region} (in parts of at
     * most 1 GiB, the kernel's limit per buffer). A failure is not an error: the ring goes on
     * with plain reads and writes, and {@link #note()} says why. The kernel pins the region's
     * pages until they are unregistered or the ring closes. Allocates, once per change of region.
     */
    void refresh(MemorySegment region, CallState cs) {
        if (fixedBase >= 0) {
            // In-flight I/Os keep their buffers; the kernel unpins the pages when they end. A
            // failure leaves them pinned until the ring closes: harmless, nothing to report.
            Posix.syscall(cs, SYS_IO_URING_REGISTER, ringFd, IORING_UNREGISTER_BUFFERS, 0, 0, 0, 0);
            fixedBase = -1;
            fixedEnd = -1;
        }
        fixedSeen = region;
        if (region == null) {
            fixedNote = "off: no region offered";
            return;
        }
        if (!region.scope().isAlive()) {
            fixedNote = "off: the offered region was already freed";
            return;
        }
        long size = region.byteSize();
        int parts = (int) ((size + MAX_FIXED_BUFFER_BYTES - 1) / MAX_FIXED_BUFFER_BYTES);
        long r;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment iovs = a.allocate(Iovec.BYTES * Math.max(1, parts), 8);
            for (int i = 0; i < parts; i++) {
                long off = i * MAX_FIXED_BUFFER_BYTES;
                iovs.set(JAVA_LONG, Iovec.BYTES * i, region.address() + off);
                iovs.set(JAVA_LONG, Iovec.BYTES * i + 8, Math.min(MAX_FIXED_BUFFER_BYTES, size - off));
            }
            r = Posix.syscall(cs, SYS_IO_URING_REGISTER, ringFd, IORING_REGISTER_BUFFERS, iovs.address(), parts, 0, 0);
        }
        String what = (size >= 1 << 20 ? (size >> 20) + " MiB" : (size >> 10) + " kB") + " in " + parts
                + (parts == 1 ? " buffer" : " buffers");
        if (r < 0) {
            int errno = (int) -r;
            fixedNote = "off: io_uring_register(IORING_REGISTER_BUFFERS) of " + what + " failed: " + Errno.name(errno)
                    + (errno == Errno.ENOMEM
                            ? " (registered buffers are pinned and count against RLIMIT_MEMLOCK: raise `ulimit -l`"
                                    + " or grant CAP_IPC_LOCK); I/Os map their buffers one by one instead"
                            : "; I/Os map their buffers one by one instead");
            return;
        }
        fixedBase = region.address();
        fixedEnd = fixedBase + size;
        fixedNote = "on: " + what;
    }

    /** "on: 512 MiB in 1 buffer", or "off: …" with the reason. Any thread. */
    String note() {
        return fixedNote;
    }

    /** I/Os prepared into registered buffers. Owner only, or after close. */
    long fixedIos() {
        return fixedIos;
    }
}
