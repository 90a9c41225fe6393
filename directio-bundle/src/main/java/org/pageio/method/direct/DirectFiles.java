package org.pageio.method.direct;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.pageio.api.IoHandle;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;
import org.pageio.posix.Iovec;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/**
 * The native rules of direct I/O: alignment, putting a descriptor into O_DIRECT mode
 * ({@code fcntl(F_SETFL)}), the file-system type ({@code fstatfs}) and the messages. Static, any
 * thread; the raw calls never throw and never allocate except on an error path.
 */
final class DirectFiles {

    /** Buffer address, transfer length and file offset must be multiples of this. */
    static final int ALIGNMENT = 4096;

    private static final boolean AARCH64 = switch (System.getProperty("os.arch")) {
        case "aarch64", "arm64" -> true;
        default -> false;
    };
    private static final long SYS_FCNTL = AARCH64 ? 25 : 72;
    private static final long SYS_FSTATFS = AARCH64 ? 44 : 138;
    private static final long SYS_STATFS = AARCH64 ? 43 : 137;
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

    /** The file-system type of the file behind {@code fd} ({@code fstatfs}), e.g. "ext4 (0xef53)". */
    static String fsTypeOf(int fd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(256, 8);
            long r = Posix.syscall(CallState.allocate(a), SYS_FSTATFS, fd, buf.address(), 0, 0, 0, 0);
            return r < 0 ? "unknown (fstatfs failed: " + Errno.name((int) -r) + ")" : fsTypeName(buf.get(ValueLayout.JAVA_LONG, 0));
        }
    }

    /** The file-system type of {@code path} ({@code statfs}). */
    static String fsTypeOf(Path path) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(256, 8);
            MemorySegment cPath = a.allocateFrom(path.toString());
            long r = Posix.syscall(CallState.allocate(a), SYS_STATFS, cPath.address(), buf.address(), 0, 0, 0, 0);
            return r < 0 ? "unknown (statfs failed: " + Errno.name((int) -r) + ")" : fsTypeName(buf.get(ValueLayout.JAVA_LONG, 0));
        }
    }

    /** {@code f_type} by name (linux/magic.h), with the number. */
    static String fsTypeName(long magic) {
        String name = switch ((int) magic) {
            case 0xEF53 -> "ext4";
            case 0x58465342 -> "xfs";
            case 0x9123683E -> "btrfs";
            case 0x01021994 -> "tmpfs";
            case 0x794C7630 -> "overlayfs";
            case 0x6969 -> "nfs";
            case 0xFF534D42 -> "cifs";
            case 0x2FC12FC1 -> "zfs";
            case 0x65735546 -> "fuse";
            case 0xF2F52010 -> "f2fs";
            case 0x01021997 -> "9p";
            case 0x4D44 -> "vfat";
            case 0x9FA0 -> "proc";
            case 0x62656572 -> "sysfs";
            case 0x858458F6 -> "ramfs";
            case 0x73717368 -> "squashfs";
            default -> "type";
        };
        return name + " (0x" + Long.toHexString(magic) + ")";
    }

    /** Why a file cannot be read with O_DIRECT, and the way out. */
    static String refusal(String file, String fsType, int errno) {
        return "O_DIRECT refused for " + file + " on file system " + fsType + ": " + Errno.name(errno) + " ("
                + Errno.message(errno) + "); this file system does not support direct I/O: use io_method=io_uring,"
                + " worker or sync (buffered) for data on it, or move the data directory to a file system that"
                + " supports O_DIRECT (ext4, xfs, btrfs)";
    }

    /**
     * Opens {@code path} with O_DIRECT added, for a storage manager; on EINVAL the exception names
     * the file, the file-system type and the way out.
     */
    static int openDirect(Path path, int flags, int mode) throws java.io.IOException {
        try {
            return Posix.open(path, flags | OpenFlags.O_DIRECT, mode);
        } catch (org.pageio.posix.PosixException e) {
            if (e.errno() == Errno.EINVAL) {
                Path where = Files.exists(path) ? path : path.toAbsolutePath().getParent();
                throw new java.io.IOException(refusal(path.toString(), fsTypeOf(where), e.errno()), e);
            }
            throw e;
        }
    }
}
