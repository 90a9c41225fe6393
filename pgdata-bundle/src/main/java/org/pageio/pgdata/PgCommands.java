package org.pageio.pgdata;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;

/**
 * The commands over a stopped cluster as their faces run them — the Gogo commands
 * {@code pageio:verify --pgdata} and {@code pageio:pgcount} in the container, {@code ./pageio
 * verify} and {@code ./pageio pgcount} on the command line — so that the faces cannot differ: the
 * cluster opened read-only, a pool of its own on the given method ({@link #settings}), and the work.
 *
 * <p>{@link #verify} is {@code pg_checksums --check}: {@link PgChecksums} over the cluster, and
 * what {@code pg_checksums} prints on the way — each bad block as
 * {@code pg_checksums: error: checksum verification failed …} and, with progress on, its
 * {@code progress_report} line ({@code 1024/2047 MB (50%) computed}) at most once a second, and
 * once at the end. The summary and the exit code are the caller's: a face prints the
 * {@linkplain PgChecksums.Result#summary() summary} on standard output and fails when
 * {@link PgChecksums.Result#badChecksums()} is not 0, as {@code pg_checksums} exits 1.
 */
public final class PgCommands {

    /** {@code shared_buffers} of the pool a cluster is read through: 16 MB, the rings and streams need no more. */
    public static final int SHARED_BUFFERS = 2048;
    /** The most files {@link #verify} reads at once, each on a thread and session of its own. */
    public static final int MAX_JOBS = 64;

    private PgCommands() {
    }

    /**
     * The settings of a pool that reads a cluster: {@code base}'s read settings (the look-ahead,
     * {@code effective_io_concurrency}, {@code io_combine_limit}) with {@link #SHARED_BUFFERS}, and
     * pages entering the pool as stored, whatever {@code zero_damaged_pages} and
     * {@code ignore_checksum_failure} say (a verification reports a damaged page; it never repairs it).
     */
    public static BufMgrSettings settings(BufMgrSettings base) {
        return base.toBuilder().sharedBuffers(SHARED_BUFFERS).zeroDamagedPages(false).ignoreChecksumFailure(false).build();
    }

    /**
     * Verifies the stopped cluster in {@code dir} through a pool on {@code method} with
     * {@code jobs} files in flight, printing bad blocks (and, if {@code progress}, the progress) on
     * {@code err}.
     *
     * @throws PgDataException for what pg_checksums refuses (a running cluster, checksums off, an
     *         unclean shutdown, a partial block), its message without the {@code pg_checksums: error: } prefix
     * @throws IOException for a read that failed, naming the relation, block and file
     */
    public static PgChecksums.Result verify(Path dir, IoMethod method, BufMgrSettings base, int jobs, boolean progress,
            PrintStream err) throws IOException {
        // session slots for the workers and one spare: shared_buffers / max_sessions is each stream's pin limit
        BufMgrSettings settings = settings(base).toBuilder().maxSessions(jobs + 1).build();
        try (PgCluster cluster = PgCluster.open(dir);
                BufferManagerCore core = cluster.openBufferManager(method, settings)) {
            Progress p = new Progress(err, progress);
            PgChecksums.Result r = PgChecksums.check(cluster, core.pool(), new PgChecksums.Listener() {
                @Override
                public void badBlock(PgChecksums.BadBlock bad) {
                    err.println("pg_checksums: error: " + bad.message());
                }

                @Override
                public void progress(long currentBytes, long totalBytes) {
                    p.report(currentBytes, totalBytes, false);
                }
            }, jobs);
            p.finish();
            return r;
        }
    }

    /**
     * {@code SELECT count(*)} of the heap {@code relpath} ({@code pg_relation_filepath}'s path) of the
     * stopped cluster in {@code dir} ({@link PgHeapScan}) and its {@code pg_visibility_map_summary}
     * ({@link PgVisibilityMap}), through a pool on {@code method}, as lines:
     * {@code count: N}, {@code all_visible: N}, {@code all_frozen: N}, then the blocks and tuples read.
     *
     * @throws PgDataException for a refusal (a cluster not shut down, an updating multixact, a damaged page)
     * @throws IOException for a read that failed, naming the relation, block and file
     */
    public static String count(Path dir, IoMethod method, BufMgrSettings base, String relpath) throws IOException {
        try (PgCluster cluster = PgCluster.open(dir);
                BufferManagerCore core = cluster.openBufferManager(method, settings(base))) {
            PgHeapScan.Count c = PgHeapScan.count(cluster, core.pool(), relpath);
            PgVisibilityMap.Summary vm = PgVisibilityMap.summary(cluster, core.pool(), relpath);
            return "count: " + c.visible() + "\n"
                    + "all_visible: " + vm.allVisible() + "\n"
                    + "all_frozen: " + vm.allFrozen() + "\n"
                    + "blocks: " + c.blocks() + " (" + c.allVisiblePages() + " with PD_ALL_VISIBLE), tuples: " + c.tuples()
                    + ", decided by pg_xact: " + c.commitLogLookups();
        }
    }

    /** {@code pg_checksums}' {@code progress_report}: at most once a second, and once at the end. */
    private static final class Progress {
        private final PrintStream err;
        private final boolean on;
        private final boolean tty = System.console() != null;
        private long last;
        private long current;
        private long total;

        Progress(PrintStream err, boolean on) {
            this.err = err;
            this.on = on;
        }

        void report(long currentBytes, long totalBytes, boolean finished) {
            current = currentBytes;
            total = totalBytes;
            long now = System.nanoTime();
            if (!on || (!finished && now - last < 1_000_000_000L)) {
                return;
            }
            last = now;
            int percent = total == 0 ? 0 : (int) (current * 100 / total);
            String totalMb = Long.toString(total / (1024 * 1024));
            String currentMb = Long.toString(current / (1024 * 1024));
            err.print(String.format(Locale.ROOT, "%" + totalMb.length() + "s/%s MB (%d%%) computed", currentMb, totalMb, percent)
                    + (!finished && tty ? "\r" : "\n"));
            err.flush();
        }

        void finish() {
            report(current, total, true);
        }
    }
}
