package org.pageio.posix;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Opening files for direct I/O (O_DIRECT) and saying why a file system refuses it: the
 * file-system type from {@code statfs(2)}/{@code fstatfs(2)} by name, and one message with the
 * file, the type and the way out. Shared by the storage manager (which opens relation files with
 * O_DIRECT under {@code io_method=direct}) and the direct method (which switches descriptors it is
 * given). Static, thread-safe; allocates only to build messages.
 */
public final class DirectIo {

    /** Buffer address, transfer length and file offset of a direct I/O must be multiples of this. */
    public static final int ALIGNMENT = 4096;

    private static final long SYS_FSTATFS = Arch.CURRENT == Arch.AARCH64 ? 44 : 138;
    private static final long SYS_STATFS = Arch.CURRENT == Arch.AARCH64 ? 43 : 137;
    /** {@code struct statfs} is 120 bytes on both architectures; {@code f_type} is its first long. */
    private static final long STATFS_BYTES = 256;

    private DirectIo() {
    }

    /**
     * {@code open(2)} with O_DIRECT added (and O_CLOEXEC, as {@link Posix#open}). When the file
     * system refuses O_DIRECT (EINVAL), the exception's message names the file, the file-system
     * type and the way out: {@code open(<file>) failed: EINVAL (Invalid argument), O_DIRECT refused
     * on file system tmpfs (0x1021994): … use io_method=io_uring, worker or sync …}.
     *
     * @return the descriptor
     * @throws PosixException naming the file and the errno (and, for EINVAL, the file system)
     */
    public static int open(Path path, int flags, int mode) throws PosixException {
        try {
            return Posix.open(path, flags | OpenFlags.O_DIRECT, mode);
        } catch (PosixException e) {
            if (e.errno() != Errno.EINVAL) {
                throw e;
            }
            throw new PosixException("open", path, Errno.EINVAL, "O_DIRECT refused on file system "
                    + fileSystemType(path) + ": " + WAY_OUT);
        }
    }

    /** What to do when a file system refuses O_DIRECT. */
    public static final String WAY_OUT = "this file system does not support direct I/O: use io_method=io_uring,"
            + " worker or sync (buffered) for data on it, or move the data directory to a file system that supports"
            + " O_DIRECT (ext4, xfs, btrfs)";

    /**
     * Why {@code file} cannot be read or written with O_DIRECT, and the way out:
     * {@code O_DIRECT refused for <file> on file system <type>: EINVAL (…); this file system does
     * not support direct I/O: use io_method=…}.
     */
    public static String refusal(String file, String fsType, int errno) {
        return "O_DIRECT refused for " + file + " on file system " + fsType + ": " + Errno.name(errno) + " ("
                + Errno.message(errno) + "); " + WAY_OUT;
    }

    /** The file-system type of the file behind {@code fd} ({@code fstatfs}), e.g. {@code "ext4 (0xef53)"}. */
    public static String fileSystemType(int fd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(STATFS_BYTES, 8);
            long r = Posix.syscall(CallState.allocate(a), SYS_FSTATFS, fd, buf.address(), 0, 0, 0, 0);
            return r < 0 ? "unknown (fstatfs failed: " + Errno.name((int) -r) + ")"
                    : fileSystemTypeName(buf.get(ValueLayout.JAVA_LONG, 0));
        }
    }

    /**
     * The file-system type of {@code path} ({@code statfs}); of its nearest existing ancestor when
     * it does not exist yet (the file system it would be created on).
     */
    public static String fileSystemType(Path path) {
        Path p = path.toAbsolutePath();
        while (p.getParent() != null && !Files.exists(p)) {
            p = p.getParent();
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(STATFS_BYTES, 8);
            MemorySegment cPath = a.allocateFrom(p.toString());
            long r = Posix.syscall(CallState.allocate(a), SYS_STATFS, cPath.address(), buf.address(), 0, 0, 0, 0);
            return r < 0 ? "unknown (statfs failed: " + Errno.name((int) -r) + ")"
                    : fileSystemTypeName(buf.get(ValueLayout.JAVA_LONG, 0));
        }
    }

    /** {@code f_type} by name ({@code linux/magic.h}), with the number: {@code "ext4 (0xef53)"}. */
    public static String fileSystemTypeName(long magic) {
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
}
