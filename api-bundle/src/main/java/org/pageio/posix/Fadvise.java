package org.pageio.posix;

/** Advice values for {@link Posix#fadvise} ({@code posix_fadvise}); Linux values. Thread-safe. */
public final class Fadvise {
    public static final int POSIX_FADV_NORMAL = 0;
    public static final int POSIX_FADV_RANDOM = 1;
    public static final int POSIX_FADV_SEQUENTIAL = 2;
    /** Start reading the range into the page cache now. */
    public static final int POSIX_FADV_WILLNEED = 3;
    /** Drop the range's clean pages from the page cache. */
    public static final int POSIX_FADV_DONTNEED = 4;
    public static final int POSIX_FADV_NOREUSE = 5;

    private Fadvise() { }
}
