package org.pageio.method.direct;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import org.pageio.api.IoHandle;
import org.pageio.posix.CallState;
import org.pageio.posix.DirectIo;
import org.pageio.posix.Errno;
import org.pageio.posix.Iovec;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/**
 * The native rules of direct I/O: alignment and putting a descriptor into O_DIRECT mode
 * ({@code fcntl(F_SETFL)}); the file-system type and the refusal message are
 * {@link DirectIo}'s (shared with the storage manager). Static, any
 * thread; the raw calls never throw and never allocate except on an error path.
 */
final class DirectFiles {

    /** Buffer address, transfer length and file offset must be multiples of this. */
    static final int ALIGNMENT = DirectIo.ALIGNMENT;

    private static final boolean AARCH64 = switch (System.getProperty("os.arch")) {
        case "aarch64", "arm64" -> true;
        default -> false;
    };
    private static final long SYS_FCNTL = AARCH64 ? 25 : 72;
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;

    private DirectFiles() {
    }

    /**
     * Returns {@code null} when the handle's buffers, length and offset are aligned to
     * {@link #ALIGNMENT}, else a message saying which of the three is not (the first found, in the
     * order buffer address, transfer length, file offset). fsync needs no alignment.
     */
    static String misalignment(IoHandle h) {
        if (h.op() != IoHandle.OP_READV && h.op() != IoHandle.OP_WRITEV) {
            return null;
        }
        MemorySegment iov = h.iovecs();
        int n = h.iovcnt();
        for (int i = 0; i < n; i++) {
            long base = Iovec.base(iov, i);
            if ((base & (ALIGNMENT - 1)) != 0) {
                return "buffer address 0x" + Long.toHexString(base) + (n > 1 ? " (iovec " + i + " of " + n + ")" : "")
                        + " is not aligned to " + ALIGNMENT + " bytes (misaligned by " + (base & (ALIGNMENT - 1)) + ")";
            }
        }
        for (int i = 0; i < n; i++) {
            long len = Iovec.length(iov, i);
            if ((len & (ALIGNMENT - 1)) != 0) {
                return "transfer length " + len + (n > 1 ? " (iovec " + i + " of " + n + ", " + h.length() + " in all)" : "")
                        + " is not a multiple of " + ALIGNMENT + " bytes";
            }
        }
        if ((h.offset() & (ALIGNMENT - 1)) != 0) {
            return "file offset " + h.offset() + " is not aligned to " + ALIGNMENT + " bytes (misaligned by "
                    + (h.offset() & (ALIGNMENT - 1)) + ")";
        }
        return null;
    }

    /**
     * Puts {@code fd} into O_DIRECT mode unless it already is. Returns 0, or -errno: {@code -EBADF}
     * for a closed descriptor, {@code -EINVAL} when the file system refuses O_DIRECT.
     */
    static int makeDirect(CallState cs, int fd) {
        if (fd < 0) {
            return -Errno.EBADF;
        }
        long fl = Posix.syscall(cs, SYS_FCNTL, fd, F_GETFL, 0, 0, 0, 0);
        if (fl < 0) {
            return (int) fl;
        }
        if ((fl & OpenFlags.O_DIRECT) != 0) {
            return 0;
        }
        long r = Posix.syscall(cs, SYS_FCNTL, fd, F_SETFL, fl | OpenFlags.O_DIRECT, 0, 0, 0);
        return r < 0 ? (int) r : 0;
    }

    /** Whether {@code fd} is in O_DIRECT mode; false for a bad descriptor. */
    static boolean isDirect(int fd) {
        try (Arena a = Arena.ofConfined()) {
            long fl = Posix.syscall(CallState.allocate(a), SYS_FCNTL, fd, F_GETFL, 0, 0, 0, 0);
            return fl >= 0 && (fl & OpenFlags.O_DIRECT) != 0;
        }
    }

    /** The file a descriptor stands for, from {@code /proc/self/fd}; for messages only. */
    static String fileOf(int fd) {
        try {
            return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString();
        } catch (Exception e) {
            return "descriptor " + fd;
        }
    }
}
