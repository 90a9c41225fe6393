package org.pageio.bufmgr;

import java.io.IOException;
import org.osgi.annotation.versioning.ProviderType;
import org.pageio.api.IoMethod;
import org.pageio.api.IoSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.posix.PosixException;

/**
 * What a read stream needs of a buffer session, and nothing more: two-phase reads
 * ({@link #startReadBuffers}, {@link #waitReadBuffers}, and the peek and progress between them),
 * its pin budget, and releasing a buffer it returned. {@link BufferSession} implements it; the
 * stream package depends on this interface rather than on the session, so that the session does
 * not know streams exist (PostgreSQL's {@code read_stream.c} likewise sits on top of
 * {@code bufmgr.c}'s {@code StartReadBuffers}/{@code WaitReadBuffers}).
 *
 * <p>Every method belongs to the session's owning thread.
 */
@ProviderType
public interface StreamingReads {

    /** The session's AIO session, whose handles the stream's reads use. */
    IoSession io();

    /** The pool's settings (the stream's defaults for look-ahead and combining). */
    BufMgrSettings settings();

    /** The I/O method reads go to now. */
    IoMethod method();

    /** Whether reads start nothing and run in the wait phase ({@code io_method=sync}), as now. */
    boolean defersReads();

    /** How many more buffers the session may pin; see {@link BufferSession#additionalPinLimit}. */
    int additionalPinLimit();

    /** A reusable read operation for up to {@code maxBlocks} blocks. */
    ReadBuffersOperation newOperation(int maxBlocks);

    /** See {@link BufferSession#startReadBuffers}. */
    boolean startReadBuffers(ReadBuffersOperation op, int[] buffers, int offset, int forwarded, SmgrRelation rel,
            long block, int nblocks, int flags, BufferAccessStrategy strategy) throws PosixException;

    /** See {@link BufferSession#waitReadBuffers}. */
    boolean waitReadBuffers(ReadBuffersOperation op) throws IOException;

    /** See {@link BufferSession#readBuffersIoOver}. */
    boolean readBuffersIoOver(ReadBuffersOperation op);

    /** See {@link BufferSession#awaitReadProgress}. */
    void awaitReadProgress(ReadBuffersOperation op, int max);

    /** Unpins a buffer. */
    void releaseBuffer(int buf);

    /** Where a stream adds its counts when it ends: the pool's {@link BufferPool#streamTotals()}. */
    ReadStreamTotals streamTotals();
}
