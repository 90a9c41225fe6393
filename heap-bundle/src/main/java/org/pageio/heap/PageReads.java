package org.pageio.heap;

import java.io.IOException;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.ReadBuffersOperation;
import org.pageio.bufmgr.smgr.SmgrRelation;

/**
 * Single-page reads through the buffer manager (PostgreSQL's {@code ReadBuffer}) that count
 * what EXPLAIN shows: hits, blocks read, time waiting. Uses the two-phase API so it knows whether
 * the page was a hit. One per scan; the session's thread.
 */
public final class PageReads {

    private final BufferSession session;
    private final ReadBuffersOperation op;
    private final int[] buf = new int[1];
    public long hits;
    public long reads;
    public long waitNanos;

    public PageReads(BufferSession session) {
        this.session = session;
        this.op = session.newOperation(1);
    }

    /** A pinned, valid buffer with {@code block} of {@code rel}; release it with the session. */
    public int read(SmgrRelation rel, long block, BufferAccessStrategy strategy) throws IOException {
        if (!session.startReadBuffers(op, buf, 0, 0, rel, block, 1, ReadBuffersOperation.SYNCHRONOUSLY, strategy)) {
            hits++;
            return buf[0];
        }
        long t0 = System.nanoTime();
        try {
            session.waitReadBuffers(op);
        } catch (IOException | RuntimeException e) {
            session.releaseBuffer(buf[0]);
            throw e;
        }
        waitNanos += System.nanoTime() - t0;
        reads++;
        return buf[0];
    }
}
