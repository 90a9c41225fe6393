package org.pageio.bufmgr;

import java.lang.foreign.MemorySegment;
import org.pageio.api.IoCallback;
import org.pageio.api.IoHandle;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.bufmgr.page.PageVerifier;
import org.pageio.bufmgr.smgr.ReadVerification;
import org.pageio.bufmgr.smgr.SmgrRelation;

/**
 * The buffer manager's completion callback on a read (PostgreSQL's
 * {@code shared_buffer_readv_*}). Registered before the storage manager's {@code md_readv}, so it
 * runs after it and receives whole blocks read.
 *
 * <ul>
 *   <li>stage (issuer): each buffer gets an extra pin owned by the I/O and publishes the I/O's
 *       wait reference, so other sessions can wait on it and the buffer cannot be evicted
 *       while the kernel writes into it, even if the issuer gives up.</li>
 *   <li>completeShared (any thread): verifies each page read (header and checksum) when the
 *       storage manager's {@link ReadVerification} is {@code PAGEIO} (with {@code NONE} every page
 *       read is VALID as it is, for a reader that checks it itself), sets VALID,
 *       or zeroes it ({@link ReadBuffersOperation#ZERO_ON_ERROR}), or accepts a bad checksum
 *       ({@link ReadBuffersOperation#IGNORE_CHECKSUM_FAILURES}), or marks IO_ERROR; buffers past
 *       a partial read get IO_ERROR so that the issuer reads them again. Never throws, never
 *       allocates on success.</li>
 * </ul>
 *
 * Error data (26 bits): first damaged page's offset in the I/O (7), its verification code (3),
 * pages failed (7), pages zeroed (7), any checksum ignored (1).
 */
final class SharedBufferReadv implements IoCallback {

    private static final System.Logger LOG = System.getLogger("org.pageio.bufmgr");

    private final BufferPool pool;

    SharedBufferReadv(BufferPool pool) {
        this.pool = pool;
    }

    @Override
    public String name() {
        return "shared_buffer_readv";
    }

    @Override
    public void stage(IoHandle h, int flags) {
        // JFR: an event begun (its duration runs to completion) only while a recording has org.pageio.IoBatch on
        jdk.jfr.Event e = IoBatchEvent.enabled() ? IoBatchEvent.begin() : null;
        pool.ioEvents[h.index()] = e;
        pool.ioStartNanos[h.index()] = e == null ? 0 : System.nanoTime();
        long ref = h.waitRef();
        for (int i = 0, n = h.handleDataLength(); i < n; i++) {
            int buf = (int) h.handleData(i);
            pool.pinAgain(buf);
            pool.publishIoRef(buf, ref);
        }
    }

    @Override
    public long completeShared(IoHandle h, long result, int flags) {
        long r = verifyPages(h, result, flags);
        jdk.jfr.Event e = pool.ioEvents[h.index()];
        if (e != null) {
            long latency = System.nanoTime() - pool.ioStartNanos[h.index()];
            pool.ioEvents[h.index()] = null;
            pool.ioStartNanos[h.index()] = 0;
            emitEvent(e, h, r, latency);
        }
        return r;
    }

    /** Ends and commits the JFR event begun at staging for this I/O. */
    private static void emitEvent(jdk.jfr.Event e, IoHandle h, long result, long latencyNanos) {
        try {
            org.pageio.api.IoMethod m = h.session().boundMethod();
            IoBatchEvent.commit(e, m == null ? "?" : m.name(), IoHandle.opName(h.op()), h.target().describe(h.targetData()),
                    h.handleDataLength(), h.length(), latencyNanos, IoResult.statusName(IoResult.status(result)));
        } catch (Throwable ignore) {
            // the completion path never throws
        }
    }

    private long verifyPages(IoHandle h, long result, int flags) {
        int status = IoResult.status(result);
        int blocksRead = status == IoResult.OK || status == IoResult.PARTIAL ? IoResult.result(result) : 0;
        if (pool.storage().readVerification() == ReadVerification.NONE) {
            // pages of another format, checked by their reader: valid as read
            for (int i = 0, n = h.handleDataLength(); i < n; i++) {
                pool.terminateIo((int) h.handleData(i), i < blocksRead);
            }
            return result;
        }
        boolean checksums = pool.settings().dataChecksums();
        int failed = 0;
        int zeroed = 0;
        int ignored = 0;
        int firstBad = -1;
        int firstCode = 0;
        for (int i = 0, n = h.handleDataLength(); i < n; i++) {
            int buf = (int) h.handleData(i);
            if (i >= blocksRead) {
                pool.terminateIo(buf, false);
                continue;
            }
            MemorySegment page = pool.completionPage(buf); // its read is in progress until terminateIo
            long block = BufferPool.tagBlock(pool.tags[buf]);
            int code = PageVerifier.verify(page, block, checksums);
            if (code == PageVerifier.VALID || code == PageVerifier.VALID_ZERO) {
                pool.terminateIo(buf, true);
                continue;
            }
            if (firstBad < 0) {
                firstBad = i;
                firstCode = code;
            }
            if (code == PageVerifier.BAD_CHECKSUM) {
                pool.checksumFailed();
            }
            logDamage(h, block, page, code, flags); // before zeroing: the message describes the damage
            if (code == PageVerifier.BAD_CHECKSUM && (flags & ReadBuffersOperation.IGNORE_CHECKSUM_FAILURES) != 0) {
                ignored++;
                pool.terminateIo(buf, true);
            } else if ((flags & ReadBuffersOperation.ZERO_ON_ERROR) != 0) {
                page.fill((byte) 0);
                zeroed++;
                pool.terminateIo(buf, true);
            } else {
                failed++;
                pool.terminateIo(buf, false);
            }
        }
        if (firstBad < 0) {
            return result;
        }
        int data = (firstBad & 0x7F) | ((firstCode & 0x7) << 7) | (Math.min(failed, 127) << 10)
                | (Math.min(zeroed, 127) << 17) | ((ignored > 0 ? 1 : 0) << 24);
        return IoResult.withStatus(result, failed > 0 ? IoResult.ERROR : IoResult.WARNING, data);
    }

    /**
     * One line per damaged page, logged at once, as PostgreSQL logs in the completion path: a page
     * that is zeroed or used despite its checksum becomes valid, and the issuer may never look at
     * the I/O's result (a stream ended early, a session gone), so this WARNING is the event's
     * only line; the issuer does not log it again. A page that fails stays not valid and the
     * issuer's error names it (whoever reads it next fails again): logged here at DEBUG only, so
     * that one failure is one line too.
     */
    private void logDamage(IoHandle h, long block, MemorySegment page, int code, int flags) {
        try {
            boolean ignored = (flags & ReadBuffersOperation.IGNORE_CHECKSUM_FAILURES) != 0 && code == PageVerifier.BAD_CHECKSUM;
            boolean zeroed = !ignored && (flags & ReadBuffersOperation.ZERO_ON_ERROR) != 0;
            System.Logger.Level level = ignored || zeroed ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG;
            if (!LOG.isLoggable(level)) {
                return;
            }
            String action = ignored ? "; using it anyway (ignore_checksum_failure)"
                    : zeroed ? "; zeroing out page (zero_damaged_pages)" : "; the buffer is not valid";
            LOG.log(level, "invalid page in " + h.target().describe(SmgrRelation.targetData(block, 1)) + ": "
                    + PageVerifier.describe(code, page, block) + action);
        } catch (Throwable ignore) {
            // logging must never break completion
        }
    }

    @Override
    public String report(IoReturn ret) {
        long r = ret.result();
        int data = IoResult.errorData(r);
        int offset = data & 0x7F;
        int code = (data >>> 7) & 0x7;
        int failed = (data >>> 10) & 0x7F;
        int zeroed = (data >>> 17) & 0x7F;
        boolean ignored = ((data >>> 24) & 1) != 0;
        String what = code == PageVerifier.BAD_CHECKSUM ? "page checksum mismatch" : "invalid page header";
        long block = SmgrRelation.targetBlock(ret.targetData()) + offset;
        String where = ret.target().describe(SmgrRelation.targetData(block, 1));
        if (IoResult.status(r) == IoResult.ERROR) {
            return "invalid page in " + where + ": " + what + (failed > 1 ? " (" + failed + " pages failed)" : "")
                    + "; the buffer is not valid. Set zero_damaged_pages = on to read on past damaged pages (their content is lost)";
        }
        if (zeroed > 0) {
            return "invalid page in " + where + ": " + what + "; zeroed out " + zeroed + " page(s) (zero_damaged_pages)";
        }
        if (ignored) {
            return "ignoring checksum failure in " + where + " (ignore_checksum_failure)";
        }
        return null;
    }
}
