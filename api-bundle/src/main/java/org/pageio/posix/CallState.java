package org.pageio.posix;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * Per-thread errno capture area for the raw calls of {@link Posix}: the JVM stores the C
 * {@code errno} here right after each call, before any other native code can change it.
 *
 * <p>Allocate one per thread that makes raw calls and reuse it: the raw calls then allocate
 * nothing. Not thread-safe: a {@code CallState} is confined to one thread at a time (and to the
 * arena's owner thread if the arena is confined).
 */
public final class CallState {
    private static final StructLayout LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = LAYOUT.varHandle(PathElement.groupElement("errno"));

    private final MemorySegment segment;

    private CallState(MemorySegment segment) {
        this.segment = segment;
    }

    /** Allocates a capture area in {@code arena}; it lives as long as the arena. */
    public static CallState allocate(Arena arena) {
        return new CallState(arena.allocate(LAYOUT));
    }

    /** The capture segment, laid out by {@link Linker.Option#captureStateLayout()}. */
    public MemorySegment segment() {
        return segment;
    }

    /** The errno captured by the last call that used this state. */
    public int errno() {
        return (int) ERRNO.get(segment, 0L);
    }
}
