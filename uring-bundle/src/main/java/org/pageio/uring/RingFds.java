package org.pageio.uring;

import java.util.Arrays;

/**
 * The descriptors that are rings of this package right now, as a bitmap: a descriptor number
 * closed by its user may be taken by the next ring, and an I/O submitted on a ring's own
 * descriptor would wait for that ring to become readable, possibly forever. Copy-on-write:
 * changed only when a ring opens or closes, read on every {@code prepare}. Any thread.
 */
final class RingFds {

    private static volatile long[] bits = new long[1];
    private static final Object LOCK = new Object();

    private RingFds() {
    }

    /** Whether {@code fd} is the descriptor of an open ring (any context). One volatile read. */
    static boolean contains(int fd) {
        long[] b = bits;
        int word = fd >>> 6;
        return fd >= 0 && word < b.length && (b[word] & (1L << fd)) != 0;
    }

    /** Marks {@code fd} as a ring's after setup, or forgets it before its close (the number may be reused at once). */
    static void mark(int fd, boolean ring) {
        synchronized (LOCK) {
            int word = fd >>> 6;
            long[] b = Arrays.copyOf(bits, Math.max(bits.length, word + 1));
            if (ring) {
                b[word] |= 1L << fd;
            } else {
                b[word] &= ~(1L << fd);
            }
            bits = b;
        }
    }
}
