package org.pageio.api;

/**
 * One row of the {@code aios} view (PostgreSQL's {@code pg_aios}): a handle that is not idle, as
 * read lock-free by {@link AioContext#snapshot()}. A HANDED_OUT handle shows only its identity and
 * state. Immutable.
 *
 * @param session    the owning session's slot
 * @param index      the handle's index (first half of a wait reference)
 * @param generation the handle's generation
 * @param state      {@link IoHandle#stateName(int)}
 * @param operation  {@link IoHandle#opName(int)}
 * @param offset     file offset
 * @param length     bytes (the iovecs' sum)
 * @param target     the target's description (relation and blocks, or file)
 * @param rawResult  the raw result, once completed, else 0
 * @param result     {@link IoResult#statusName(int)} of the distilled result, once completed, else UNKNOWN
 * @param sync       the caller's synchronous hint ({@link IoHandle#FLAG_SYNCHRONOUS})
 * @param localMem   {@link IoHandle#FLAG_REFERENCES_LOCAL}
 * @param buffered   {@link IoHandle#FLAG_BUFFERED}
 */
public record AioHandleInfo(int session, int index, long generation, String state, String operation, long offset,
        long length, String target, int rawResult, String result, boolean sync, boolean localMem, boolean buffered) {
}
