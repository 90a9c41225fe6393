package org.pageio.posix;

/**
 * Flags for {@link Posix#open}, with the Linux values of the running architecture. Thread-safe.
 *
 * <p>The flags whose value differs between x86_64 and aarch64 ({@link #O_DIRECT},
 * {@link #O_DIRECTORY}, {@link #O_NOFOLLOW}) are not compile-time constants, so that code compiled
 * against this class reads the right value at run time.
 */
public final class OpenFlags {
    public static final int O_RDONLY = 0;
    public static final int O_WRONLY = 01;
    public static final int O_RDWR = 02;
    public static final int O_CREAT = 0100;
    public static final int O_EXCL = 0200;
    public static final int O_TRUNC = 01000;
    public static final int O_APPEND = 02000;
    public static final int O_NONBLOCK = 04000;
    /** Write data (not all metadata) through to the device on each write. */
    public static final int O_DSYNC = 010000;
    /** Like {@link #O_DSYNC}, plus all metadata. */
    public static final int O_SYNC = 04010000;
    public static final int O_NOATIME = 01000000;
    /** Close on exec; {@link Posix#open} always adds it. */
    public static final int O_CLOEXEC = 02000000;
    /** Bypass the page cache: buffers, offsets and lengths must be aligned (usually to 512 or 4096). */
    public static final int O_DIRECT = Arch.CURRENT == Arch.AARCH64 ? 0200000 : 040000;
    public static final int O_DIRECTORY = Arch.CURRENT == Arch.AARCH64 ? 040000 : 0200000;
    public static final int O_NOFOLLOW = Arch.CURRENT == Arch.AARCH64 ? 0100000 : 0400000;

    private OpenFlags() { }
}
