package org.pageio.bufmgr.smgr;

import java.util.Locale;
import org.pageio.posix.CallState;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/**
 * {@code fcntl(F_GETFL)}/{@code fcntl(F_SETFL)} through {@link Posix#syscall}: putting an open
 * segment descriptor into, or out of, O_DIRECT mode when the bound method changes. Linux only,
 * numbers per architecture. Never throws, never allocates.
 */
final class FileStatusFlags {

    /** x86_64: 72, aarch64: 25 (the generic table), else -1 (not called). */
    private static final long NR = switch (System.getProperty("os.arch").toLowerCase(Locale.ROOT)) {
        case "amd64", "x86_64" -> 72;
        case "aarch64", "arm64" -> 25;
        default -> -1;
    };
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;

    private FileStatusFlags() {
    }

    /**
     * Sets or clears O_DIRECT on {@code fd} unless it is already so. Returns 0, or -errno:
     * {@code -EINVAL} when the file system refuses O_DIRECT, {@code -EBADF} for a closed descriptor,
     * {@code -ENOSYS} where the number is unknown.
     */
    static int setDirect(CallState cs, int fd, boolean direct) {
        if (NR < 0) {
            return -38; // ENOSYS
        }
        long fl = Posix.syscall(cs, NR, fd, F_GETFL, 0, 0, 0, 0);
        if (fl < 0) {
            return (int) fl;
        }
        long want = direct ? fl | OpenFlags.O_DIRECT : fl & ~OpenFlags.O_DIRECT;
        if (want == fl) {
            return 0;
        }
        long r = Posix.syscall(cs, NR, fd, F_SETFL, want, 0, 0, 0);
        return r < 0 ? (int) r : 0;
    }
}
