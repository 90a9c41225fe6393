package org.pageio.bufmgr.smgr;

import org.pageio.api.IoCallback;
import org.pageio.api.IoHandle;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;

/**
 * The storage manager's completion callback (PostgreSQL's {@code md_readv_complete}): turns
 * bytes into whole blocks. A negative result stays an ERROR with its errno; fewer bytes than
 * one block is an ERROR ("read only N of M bytes"), not a retry; fewer blocks than asked is
 * PARTIAL with the number of blocks read; otherwise OK with the number of blocks.
 *
 * <p>Stateless, shared; runs in whichever thread completes the I/O; never throws.
 */
public final class MdReadv implements IoCallback {

    public static final MdReadv INSTANCE = new MdReadv();

    /** Error data: the read returned less than one block. */
    public static final int ERROR_SHORT_READ = 1;

    private MdReadv() {
    }

    @Override
    public String name() {
        return "md_readv";
    }

    @Override
    public long completeShared(IoHandle h, long result, int data) {
        if (IoResult.status(result) == IoResult.ERROR) {
            return result;
        }
        int bytes = IoResult.result(result);
        int requested = (int) (h.length() / StorageManager.BLCKSZ);
        int blocks = bytes / StorageManager.BLCKSZ;
        if (blocks == 0) {
            return IoResult.of(IoResult.ERROR, bytes, IoResult.CALLBACK_CORE, ERROR_SHORT_READ);
        }
        return IoResult.of(blocks < requested ? IoResult.PARTIAL : IoResult.OK, blocks);
    }

    @Override
    public String report(IoReturn ret) {
        long r = ret.result();
        if (IoResult.status(r) == IoResult.ERROR && IoResult.errorData(r) == ERROR_SHORT_READ) {
            return "could not read " + ret.describeTarget() + ": read only " + IoResult.result(r) + " of "
                    + ret.length() + " bytes";
        }
        return null; // a negative errno is left to the core's message, which names the errno

    }
}
