package org.pageio.method.direct;

import java.util.Arrays;
import org.pageio.api.IoHandle;
import org.pageio.posix.CallState;
import org.pageio.posix.DirectIo;
import org.pageio.posix.Errno;
import org.pageio.posix.Posix;
import org.pageio.uring.IoUring;

/**
 * One session's state: its ring (engine io_uring; {@code null} for threads) and what it knows of
 * each descriptor number it has seen: put in O_DIRECT mode, flushed before the first direct read.
 * Owner thread only (submit and inline execution run there), except {@link #ring}, which waiters
 * read to reap.
 */
final class DirectSession {

    private static final byte UNKNOWN = 0;
    private static final byte DIRECT = 1;
    private static final byte DIRECT_FLUSHED = 2;

    final IoUring ring;
    private byte[] fdState = new byte[256];

    /** Statistics, owner thread only (read by tests after the fact). */
    long directSetups;
    long flushes;
    long refusals;

    DirectSession(IoUring ring) {
        this.ring = ring;
    }

    /**
     * Prepares {@code h} for direct execution in the owner thread: alignment, O_DIRECT mode of its
     * descriptor, fdatasync before the first direct read of that descriptor in this session.
     * Returns {@code true} when the I/O may go to the kernel; otherwise it has been completed as an
     * error (with a message naming the operation, the file, the block and the errno). Never throws.
     */
    boolean admit(IoHandle h, CallState cs) {
        try {
            return admit0(h, cs);
        } catch (Throwable t) {
            refusals++;
            h.fail(-Errno.EIO, t);
            return false;
        }
    }

    private boolean admit0(IoHandle h, CallState cs) {
        String misaligned = DirectFiles.misalignment(h);
        if (misaligned != null) {
            refusals++;
            h.fail(-Errno.EINVAL, new DirectIoException("direct I/O refused before the kernel: " + misaligned));
            return false;
        }
        int fd = h.fd();
        if (fd < 0 || IoUring.isRingFd(fd)) {
            // a closed descriptor whose number a ring took meanwhile is still the closed one (EBADF)
            h.complete(-Errno.EBADF);
            return false;
        }
        byte state = fd < fdState.length ? fdState[fd] : UNKNOWN;
        if (state == UNKNOWN) {
            int r = DirectFiles.makeDirect(cs, fd);
            if (r == -Errno.EINVAL) {
                refusals++;
                h.fail(r, new DirectIoException(DirectIo.refusal(DirectFiles.fileOf(fd), DirectIo.fileSystemType(fd), Errno.EINVAL)));
                return false;
            }
            if (r < 0) {
                h.complete(r); // EBADF for a closed descriptor: the kernel's answer, unchanged
                return false;
            }
            directSetups++;
            state = DIRECT;
            remember(fd, state);
        }
        if (state == DIRECT && h.op() == IoHandle.OP_READV) {
            // Pages written through the page cache (a buffered method, or another process) may be
            // dirty: flush them before the first direct read so that it cannot see older data.
            int r = Posix.fdatasync(cs, fd);
            if (r < 0) {
                refusals++;
                h.fail(r, new DirectIoException("fdatasync of " + DirectFiles.fileOf(fd) + " before its first direct read failed: "
                        + Errno.name(-r) + " (" + Errno.message(-r) + ")"));
                return false;
            }
            flushes++;
            remember(fd, DIRECT_FLUSHED);
        }
        return true;
    }

    private void remember(int fd, byte state) {
        if (fd >= fdState.length) {
            fdState = Arrays.copyOf(fdState, Math.max(fd + 1, fdState.length * 2));
        }
        fdState[fd] = state;
    }

    /** Forgets a descriptor (the caller closes it; its number may come back for another file). */
    void forget(int fd) {
        if (fd >= 0 && fd < fdState.length) {
            fdState[fd] = UNKNOWN;
        }
    }
}
