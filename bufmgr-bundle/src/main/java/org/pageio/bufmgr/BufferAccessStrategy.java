package org.pageio.bufmgr;

import java.util.Arrays;
import org.pageio.bufmgr.stats.StatIo.IoContext;

/**
 * A ring of buffers that a bulk operation recycles instead of flooding the pool (PostgreSQL's
 * {@code BufferAccessStrategy}, freelist.c), with PostgreSQL 18's sizes: bulk read starts at
 * 256 kB plus {@code io_combine_limit × effective_io_concurrency} blocks, capped at
 * {@code max(256 kB, pin limit)}; bulk write 16 MB; vacuum 2 MB; every ring at most
 * {@code shared_buffers / 8}. Ring buffers never get a usage count above 1.
 *
 * <p>Owned by one session (not thread-safe), like the scan that uses it.
 */
public final class BufferAccessStrategy {

    /** The kinds of ring. */
    public enum Type {
        BULKREAD(IoContext.BULKREAD), BULKWRITE(IoContext.BULKWRITE), VACUUM(IoContext.VACUUM);

        final IoContext context;

        Type(IoContext context) {
            this.context = context;
        }
    }

    private final Type type;
    final int[] ring;
    int current = -1;

    BufferAccessStrategy(Type type, int size) {
        this.type = type;
        this.ring = new int[size];
        Arrays.fill(ring, -1);
    }

    /** The ring size in buffers PostgreSQL 18 would choose. */
    static int ringSize(Type type, BufMgrSettings s) {
        int kb;
        switch (type) {
            case BULKREAD -> {
                int pinLimitKb = s.maxProportionalPins() * 8;
                kb = 256 + 8 * s.effectiveIoCombineLimit() * s.effectiveIoConcurrency();
                kb = Math.min(kb, Math.max(256, pinLimitKb));
            }
            case BULKWRITE -> kb = 16 * 1024;
            default -> kb = 2 * 1024;
        }
        return Math.max(1, Math.min(kb / 8, s.sharedBuffers() / 8));
    }

    public Type type() {
        return type;
    }

    public IoContext context() {
        return type.context;
    }

    public int size() {
        return ring.length;
    }

    /**
     * How many buffers a stream using this ring may pin: the whole ring for bulk reads (it rejects
     * dirty buffers instead of flushing them), half for the others.
     */
    public int pinLimit() {
        return type == Type.BULKREAD ? ring.length : Math.max(1, ring.length / 2);
    }
}
