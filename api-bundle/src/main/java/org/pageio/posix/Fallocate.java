package org.pageio.posix;

/** Mode flags for {@link Posix#fallocate}; Linux values ({@code linux/falloc.h}). Thread-safe. */
public final class Fallocate {
    /** Mode 0: allocate and extend the file size if the range ends past it. */
    public static final int FALLOC_FL_DEFAULT = 0;
    /** Allocate, but leave the file size alone. */
    public static final int FALLOC_FL_KEEP_SIZE = 0x01;
    /** Deallocate the range; must be combined with {@link #FALLOC_FL_KEEP_SIZE}. */
    public static final int FALLOC_FL_PUNCH_HOLE = 0x02;
    /** Make the range read as zeros, allocating it. */
    public static final int FALLOC_FL_ZERO_RANGE = 0x10;

    private Fallocate() { }
}
