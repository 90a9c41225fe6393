package org.pageio.measure.drill;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.pageio.measure.fio.Fio;
import org.pageio.measure.fio.FioJob;

/**
 * The drill's fio series, each one {@link FioJob} for {@link Fio} to run on the drill's own segment
 * files, all with fio's {@code io_uring} engine and {@code --readonly}: sequential 128 KiB reads,
 * buffered and direct, at the depth of the case's {@code effective_io_concurrency} (so each eic case
 * has its own fio figure); for the bitmap and index scans, the scan's own 8 KiB reads replayed from
 * an iolog (the same blocks in the same order, direct) at the same depth, and random 8 KiB reads at
 * depth 64, direct, of as many bytes: the device's ceiling. The time is fio's own
 * {@code read.runtime} (start-up excluded).
 */
enum FioSeries {
    SEQ_BUFFERED("fio seq buffered", FioJob.Kind.SEQ_READ, 128, 0, false),
    SEQ_DIRECT("fio seq direct", FioJob.Kind.SEQ_READ, 128, 0, true),
    /** The scan's reads replayed ({@code --read_iolog}) at the scan's depth: the fair yardstick of a random scan. */
    SAME_READS("fio same reads", FioJob.Kind.REPLAY, 8, 0, true),
    /** Random reads of as many bytes at depth 64: what the device gives at a full queue. */
    RAND_CEILING("fio rand depth 64", FioJob.Kind.RAND_READ, 8, 64, true);

    /** fio's {@code --name} in every drill job. */
    static final String JOB_NAME = "pageio-drill";

    final String series;
    final FioJob.Kind kind;
    final int kib;
    /** Fixed I/O depth, or 0: the case's effective_io_concurrency (at least 1). */
    final int depth;
    final boolean direct;

    FioSeries(String series, FioJob.Kind kind, int kib, int depth, boolean direct) {
        this.series = series;
        this.kind = kind;
        this.kib = kib;
        this.depth = depth;
        this.direct = direct;
    }

    /** The depth this series runs at in a case of {@code effective_io_concurrency} {@code eic}. */
    int depth(int eic) {
        return depth > 0 ? depth : Math.max(1, eic);
    }

    /**
     * The job of this series in a case of {@code eic} reading {@code caseBytes} of {@code files}
     * (a replay reads {@code iolog} instead).
     */
    FioJob job(int eic, List<Path> files, long caseBytes, Path iolog) {
        int bs = kib * 1024;
        FioJob j = switch (kind) {
            case SEQ_READ -> FioJob.sequentialRead(files, bs, depth(eic), direct);
            case RAND_READ -> FioJob.randomRead(files, bs, depth(eic), direct).withIoSize(caseBytes);
            case REPLAY -> FioJob.replay(iolog, bs, depth(eic), direct);
            case SEQ_WRITE -> throw new IllegalStateException("the drill writes nothing with fio");
        };
        return j.withName(JOB_NAME);
    }

    String description(int eic) {
        if (this == SAME_READS) {
            return String.format(Locale.ROOT, "fio replaying the scan's %d KiB reads in its order (iolog) at depth %d, O_DIRECT,"
                    + " io_uring engine", kib, depth(eic));
        }
        return String.format(Locale.ROOT, "fio %s, %d KiB at depth %d, %s, io_uring engine", kind.rw(), kib, depth(eic),
                direct ? "O_DIRECT" : "buffered");
    }

    static FioSeries bySeries(String name) {
        for (FioSeries j : values()) {
            if (j.series.equals(name)) {
                return j;
            }
        }
        return null;
    }

    /** One line for the report, fio being {@code fio} (null = not installed). */
    static String note(Fio fio, boolean enabled) {
        if (fio == null) {
            return "fio is not installed: " + Fio.INSTALL + " (there is no fio baseline in this run)";
        }
        return enabled ? "fio (" + fio.executable() + ") ran on the same files, cold the same way"
                : "fio is installed (" + fio.executable() + ") but was switched off for this run (--no-fio)";
    }
}
