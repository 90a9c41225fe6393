package org.pageio.posix;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * {@code struct iovec} arrays for {@link Posix#preadv} and {@link Posix#pwritev}: 16 bytes each,
 * {@code {void *iov_base; size_t iov_len}} (64-bit Linux). Thread-safe; an array itself is plain
 * memory with no synchronisation. None of these methods allocates except {@link #allocate}.
 */
public final class Iovec {
    /** Size of one {@code struct iovec}. */
    public static final long BYTES = 16;
    /** Layout of one {@code struct iovec}. */
    public static final MemoryLayout LAYOUT = MemoryLayout.structLayout(
            ValueLayout.ADDRESS.withName("iov_base"),
            ValueLayout.JAVA_LONG.withName("iov_len"));

    private static final long BASE = 0;
    private static final long LENGTH = 8;

    private Iovec() { }

    /** Allocates an array of {@code count} zeroed iovecs in {@code arena}. */
    public static MemorySegment allocate(Arena arena, int count) {
        return arena.allocate(LAYOUT, count);
    }

    /**
     * Points entry {@code index} at all of {@code buf}, which must be native memory that stays
     * alive until the I/O using it is over.
     *
     * @throws IllegalArgumentException if {@code buf} is a heap segment
     */
    public static void set(MemorySegment iovArray, int index, MemorySegment buf) {
        if (!buf.isNative()) {
            throw new IllegalArgumentException("an iovec needs native memory, not a heap segment");
        }
        set(iovArray, index, buf.address(), buf.byteSize());
    }

    /** Sets entry {@code index} to {@code length} bytes at {@code address}. */
    public static void set(MemorySegment iovArray, int index, long address, long length) {
        long at = index * BYTES;
        iovArray.set(ValueLayout.JAVA_LONG, at + BASE, address);
        iovArray.set(ValueLayout.JAVA_LONG, at + LENGTH, length);
    }

    /** The {@code iov_base} of entry {@code index}, as an address. */
    public static long base(MemorySegment iovArray, int index) {
        return iovArray.get(ValueLayout.JAVA_LONG, index * BYTES + BASE);
    }

    /** The {@code iov_len} of entry {@code index}. */
    public static long length(MemorySegment iovArray, int index) {
        return iovArray.get(ValueLayout.JAVA_LONG, index * BYTES + LENGTH);
    }
}
