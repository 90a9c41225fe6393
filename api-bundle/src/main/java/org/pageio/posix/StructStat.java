package org.pageio.posix;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * glibc's {@code struct stat} for the running architecture. Package-private; only the fields
 * {@link Stat} carries are read. Thread-safe.
 */
enum StructStat {
    //     size  dev ino mode size blksize (blksize is an int on aarch64) blocks
    X86_64(144, 0, 8, 24, 48, 56, false, 64),
    AARCH64(128, 0, 8, 16, 48, 56, true, 64);

    static final StructStat CURRENT = Arch.CURRENT == Arch.AARCH64 ? AARCH64 : X86_64;

    /** Bytes to allocate for one {@code struct stat}, 8-aligned. */
    final long byteSize;
    private final long dev, ino, mode, size, blksize, blocks;
    private final boolean intBlksize;

    StructStat(long byteSize, long dev, long ino, long mode, long size, long blksize, boolean intBlksize, long blocks) {
        this.byteSize = byteSize;
        this.dev = dev;
        this.ino = ino;
        this.mode = mode;
        this.size = size;
        this.blksize = blksize;
        this.intBlksize = intBlksize;
        this.blocks = blocks;
    }

    /** Reads the fields of {@link Stat} from a {@code struct stat} that {@code fstat} filled. */
    Stat read(MemorySegment s) {
        return new Stat(
                s.get(ValueLayout.JAVA_LONG, size),
                s.get(ValueLayout.JAVA_INT, mode),
                intBlksize ? s.get(ValueLayout.JAVA_INT, blksize) : s.get(ValueLayout.JAVA_LONG, blksize),
                s.get(ValueLayout.JAVA_LONG, blocks),
                s.get(ValueLayout.JAVA_LONG, dev),
                s.get(ValueLayout.JAVA_LONG, ino));
    }
}
