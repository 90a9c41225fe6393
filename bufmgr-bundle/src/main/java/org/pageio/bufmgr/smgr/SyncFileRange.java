package org.pageio.bufmgr.smgr;

import java.util.Locale;
import org.pageio.posix.CallState;
import org.pageio.posix.Posix;

/**
 * {@code sync_file_range(2)} through {@link Posix#syscall}: Linux only, numbers per architecture.
 * The bulk writer's early write-back ({@link SmgrBulkWriter#START_WRITEBACK}).
 */
final class SyncFileRange {
    /** Wait for writeback already under way in the range before starting more. */
    static final int WAIT_BEFORE = 1;
    /** Start writeback of the range's dirty pages (asynchronous). */
    static final int WRITE = 2;
    /** Wait for the writeback of the range to finish. */
    static final int WAIT_AFTER = 4;

    /** x86_64: 277, aarch64: 84 (the generic table), else -1 (not called). */
    private static final long NR = switch (System.getProperty("os.arch").toLowerCase(Locale.ROOT)) {
        case "amd64", "x86_64" -> 277;
        case "aarch64", "arm64" -> 84;
        default -> -1;
    };

    private SyncFileRange() {
    }

    /** 0, or -errno ({@code -ENOSYS} where the number is unknown). Never throws, never allocates. */
    static long call(CallState cs, int fd, long offset, long nbytes, int flags) {
        if (NR < 0) {
            return -38; // ENOSYS
        }
        return Posix.syscall(cs, NR, fd, offset, nbytes, flags, 0, 0);
    }
}
