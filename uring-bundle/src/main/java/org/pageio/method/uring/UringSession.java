package org.pageio.method.uring;

import java.util.function.Supplier;
import org.pageio.api.IoHandle;
import org.pageio.uring.IoUring;

/**
 * What {@code io_method=io_uring} keeps per session ({@code IoSession.methodState()}): the
 * session's ring ({@link #get()}) and the state of the {@code auto} policy of
 * {@code io_uring_force_async}. Everything here is the owner's: only the session's own thread
 * submits, so the fields are plain.
 *
 * <p><b>The {@code auto} policy.</b> A buffered read of 32 kB and more is submitted without
 * {@code IOSQE_ASYNC} (a <em>probe</em>: the kernel tries the page cache inline) while the
 * ring's recent probes completed inside the {@code io_uring_enter} that submitted them, which
 * they do when their pages were cached; the copy then costs what a {@code preadv} costs and no
 * io-wq hand-off is paid. Once a probe does not complete inline (its pages had to be read), the
 * next {@link #PUNTS_PER_PROBE} such reads are punted to io-wq, where their page-cache copies run
 * beside the issuer, and the one after is a probe again. So a scan of cached data never punts,
 * and a cold scan punts all its large reads but one in {@code PUNTS_PER_PROBE + 1}.
 *
 * <p>Preallocated: the probe list holds at most the ring's entries; nothing is allocated per
 * I/O.
 */
final class UringSession implements Supplier<IoUring> {

    /** Large reads punted after a probe that did not complete inline, before the next probe. */
    static final int PUNTS_PER_PROBE = 15;

    private final IoUring ring;
    /** This batch's probes and their generations (valid up to {@link #probeCount}). */
    private final IoHandle[] probes;
    private final long[] probeGens;
    private int probeCount;
    /** Large reads still to punt before the next probe. */
    private int puntsLeft;
    /** Counters (owner only): probes that completed inline, probes that did not, reads punted. */
    private long inlineProbes;
    private long slowProbes;
    private long punted;

    UringSession(IoUring ring, int entries) {
        this.ring = ring;
        this.probes = new IoHandle[entries];
        this.probeGens = new long[entries];
    }

    /** The session's ring. */
    @Override
    public IoUring get() {
        return ring;
    }

    /**
     * The {@code IOSQE_*} flags for a large buffered read under {@code auto}: {@code IOSQE_ASYNC}
     * while punting, else 0 with {@code h} recorded as a probe of this batch.
     */
    int autoFlags(IoHandle h) {
        if (puntsLeft > 0) {
            puntsLeft--;
            punted++;
            return IoUring.IOSQE_ASYNC;
        }
        if (probeCount < probes.length) {
            probes[probeCount] = h;
            probeGens[probeCount] = h.generation();
            probeCount++;
        }
        return 0;
    }

    /**
     * After the batch went in: reaps what is ready without blocking (the probes that completed
     * inline have their CQEs posted by now) and decides, from whether every probe finished, if
     * the next large reads are punted. Nothing to do for a batch without probes.
     */
    void afterSubmit() {
        if (probeCount == 0) {
            return;
        }
        ring.poll();
        boolean inline = true;
        for (int i = 0; i < probeCount; i++) {
            IoHandle h = probes[i];
            // finished: completed (any completed state), or already recycled (generation moved on)
            if (h.generation() == probeGens[i] && h.state() < IoHandle.COMPLETED_IO) {
                inline = false;
            }
            probes[i] = null;
        }
        if (inline) {
            inlineProbes += probeCount;
        } else {
            slowProbes += probeCount;
            puntsLeft = PUNTS_PER_PROBE;
        }
        probeCount = 0;
    }

    /** Probes that completed inside the submitting io_uring_enter. Owner only. */
    long inlineProbes() {
        return inlineProbes;
    }

    /** Probes that did not (their pages had to be read). Owner only. */
    long slowProbes() {
        return slowProbes;
    }

    /** Large reads punted to io-wq by {@code auto}. Owner only. */
    long punted() {
        return punted;
    }
}
