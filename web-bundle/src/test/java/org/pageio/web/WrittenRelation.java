package org.pageio.web;

import java.io.IOException;

import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;

/** A test relation on real files whose blocks are written, fsynced and evicted, so the next reads go to the method. */
public final class WrittenRelation {

    private WrittenRelation() {
    }

    /**
     * Relation {@code relNumber} of {@code blocks} blocks, extended and dirtied by session {@code s}
     * of {@code bufmgr}, written by a checkpoint and then evicted from the pool.
     */
    public static SmgrRelation create(BufferManagerCore bufmgr, BufferSession s, int relNumber, int blocks)
            throws IOException {
        SmgrRelation rel = bufmgr.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber));
        int[] bufs = new int[blocks];
        s.extendBy(rel, blocks, bufs, null);
        for (int b : bufs) {
            s.beginModify(b);
            s.endModify(b, true);
            s.releaseBuffer(b);
        }
        bufmgr.pool().checkpoint();
        bufmgr.pool().evictAll(s);
        return rel;
    }
}
