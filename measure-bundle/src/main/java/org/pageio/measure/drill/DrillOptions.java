package org.pageio.measure.drill;

import java.nio.file.Path;
import java.util.List;
import org.pageio.bufmgr.smgr.StorageManager;

/**
 * What the drill runs. Immutable.
 *
 * @param rows          rows of the cold-scan drill's table {@code t} (8,000,000 ≈ 1.9 GB)
 * @param rounds        interleaved rounds; medians are taken over them
 * @param methods       I/O methods to compare, by {@code io.method}; empty = every available one
 * @param eic           {@code effective_io_concurrency} values of the cold sequential-scan cases
 * @param sharedBuffers {@code shared_buffers} in 8 kB blocks (256MB = 32768)
 * @param dataDir       the drill's own directory (catalog and relation files), e.g. {@code <data>/drill}
 * @param resultsDir    where {@code <timestamp>.json} and {@code .md} go; null = write no files
 * @param segmentBlocks blocks per segment file (PostgreSQL's 1 GB = 131072; tests use small ones)
 * @param seed          the generator's seed
 * @param cases         which cases run: {@code seq} (cold count(*) per eic), {@code warm} (OS-warm count(*)),
 *                      {@code bitmap}, {@code index}, {@code visibility} (PostgreSQL 19's visibility map test,
 *                      {@link VisibilityCase}), {@code hot} (a table wholly in shared buffers against a plain loop,
 *                      {@link HotCase}), {@code concurrent} (sessions scanning at once, {@link ConcurrentCase}); empty = all
 * @param fio           run fio baselines when fio is installed
 * @param seqHint       also run each buffered method with posix_fadvise(POSIX_FADV_SEQUENTIAL) on the table's segment
 *                      files in the cold count(*) cases (series {@code <method> +FADV_SEQUENTIAL}; a pageio lever to
 *                      measure, PostgreSQL gives no such advice)
 * @param vacuumBufferUsageLimitKb the visibility case's {@code VACUUM (BUFFER_USAGE_LIMIT …)} in kB: 0 for no ring,
 *                      or {@code VacuumOptions.DEFAULT_RING} (-1) for PostgreSQL's default 2MB ring
 * @param sessions      the concurrent case's numbers of sessions scanning at once, each 1..{@value #MAX_SESSIONS}
 * @param pg            a heap of a stopped PostgreSQL cluster to scan instead of the drill's tables ({@code --pgdata},
 *                      {@code --relation}); null: the drill's own tables
 */
public record DrillOptions(long rows, int rounds, List<String> methods, List<Integer> eic, int sharedBuffers, Path dataDir,
        Path resultsDir, long segmentBlocks, long seed, List<String> cases, boolean fio, boolean seqHint,
        long vacuumBufferUsageLimitKb, List<Integer> sessions, PgSource pg) {

    /**
     * A PostgreSQL heap the count(*) cases read instead of {@code t}: read-only, the cluster stopped.
     *
     * @param pgdata   the cluster's data directory
     * @param relation its main fork's file as {@code pg_relation_filepath()} prints it, e.g. {@code base/5/16384}
     */
    public record PgSource(Path pgdata, String relation) {
    }

    /** The cases a drill over a PostgreSQL heap runs: the count(*) ones. */
    public static final List<String> PG_CASES = List.of("seq", "warm");

    /** Options over the drill's own tables. */
    public DrillOptions(long rows, int rounds, List<String> methods, List<Integer> eic, int sharedBuffers, Path dataDir,
            Path resultsDir, long segmentBlocks, long seed, List<String> cases, boolean fio, boolean seqHint,
            long vacuumBufferUsageLimitKb, List<Integer> sessions) {
        this(rows, rounds, methods, eic, sharedBuffers, dataDir, resultsDir, segmentBlocks, seed, cases, fio, seqHint,
                vacuumBufferUsageLimitKb, sessions, null);
    }

    /** Options with the default numbers of concurrent sessions. */
    public DrillOptions(long rows, int rounds, List<String> methods, List<Integer> eic, int sharedBuffers, Path dataDir,
            Path resultsDir, long segmentBlocks, long seed, List<String> cases, boolean fio, boolean seqHint,
            long vacuumBufferUsageLimitKb) {
        this(rows, rounds, methods, eic, sharedBuffers, dataDir, resultsDir, segmentBlocks, seed, cases, fio, seqHint,
                vacuumBufferUsageLimitKb, DEFAULT_SESSIONS);
    }

    /** Options with PostgreSQL's default vacuum ring. */
    public DrillOptions(long rows, int rounds, List<String> methods, List<Integer> eic, int sharedBuffers, Path dataDir,
            Path resultsDir, long segmentBlocks, long seed, List<String> cases, boolean fio, boolean seqHint) {
        this(rows, rounds, methods, eic, sharedBuffers, dataDir, resultsDir, segmentBlocks, seed, cases, fio, seqHint,
                org.pageio.table.VacuumOptions.DEFAULT_RING);
    }

    /** Options without the sequential-advice variants. */
    public DrillOptions(long rows, int rounds, List<String> methods, List<Integer> eic, int sharedBuffers, Path dataDir,
            Path resultsDir, long segmentBlocks, long seed, List<String> cases, boolean fio) {
        this(rows, rounds, methods, eic, sharedBuffers, dataDir, resultsDir, segmentBlocks, seed, cases, fio, false);
    }

    public static final long DEFAULT_ROWS = 8_000_000;
    public static final int DEFAULT_ROUNDS = 4;
    public static final List<Integer> DEFAULT_EIC = List.of(1, 16, 64);
    /** 256MB of shared buffers. */
    public static final int DEFAULT_SHARED_BUFFERS = 32768;
    /** The smallest scaled shared_buffers: 16MB. */
    public static final int MIN_SCALED_SHARED_BUFFERS = 2048;

    /**
     * shared_buffers for {@code rows}: 256MB at the default 8,000,000 rows, scaled down with the
     * tables (at least 16MB), so the tables stay about 7.5 times bigger than shared buffers as in
     * the default drill, and a small drill does not spend its time zeroing a 256MB pool per run.
     */
    public static int scaledSharedBuffers(long rows) {
        long scaled = (long) Math.ceil((double) DEFAULT_SHARED_BUFFERS * rows / DEFAULT_ROWS);
        return (int) Math.max(MIN_SCALED_SHARED_BUFFERS, Math.min(DEFAULT_SHARED_BUFFERS, scaled));
    }
    /** The table's name in the drill's catalog. */
    public static final String TABLE = "t";
    /** PostgreSQL 19's read-stream test table (random {@code val}, indexed) for the bitmap heap and index scan cases. */
    public static final String PREFETCH_TABLE = "prefetch_test";
    /** Every case group, in the order they run. */
    public static final List<String> ALL_CASES = List.of("seq", "warm", "bitmap", "index", "visibility", "hot", "concurrent");
    /** The hot and concurrent cases' table: {@code t}'s shape, {@link #smallRows} rows. */
    public static final String SMALL_TABLE = "t_small";
    /** The concurrent case's default numbers of sessions. */
    public static final List<Integer> DEFAULT_SESSIONS = List.of(1, 2, 8, 32);
    /** The most sessions the concurrent case runs at once: a pool's session slots ({@code max_sessions}' default). */
    public static final int MAX_SESSIONS = 64;

    /** {@link #SMALL_TABLE}'s rows: a 32nd of {@code t}'s (250,000 at the default 8,000,000: 62 MB), at least 10,000. */
    public static long smallRows(long tRows) {
        return Math.max(10_000, tRows / 32);
    }
    /** PostgreSQL's default {@code effective_io_concurrency}, used by the OS-warm case. */
    public static final int DEFAULT_EIC_VALUE = 16;

    public DrillOptions {
        if (rows < 1) {
            throw new IllegalArgumentException("--rows must be at least 1, not " + rows);
        }
        if (rounds < 1 || rounds > 100) {
            throw new IllegalArgumentException("--rounds must be 1..100, not " + rounds);
        }
        methods = List.copyOf(methods);
        eic = List.copyOf(eic);
        if (eic.isEmpty()) {
            throw new IllegalArgumentException("--eic needs at least one value");
        }
        for (int e : eic) {
            if (e < 0 || e > 1000) {
                throw new IllegalArgumentException("--eic: effective_io_concurrency = " + e
                        + " is out of range: valid values are 0..1000");
            }
        }
        if (sharedBuffers < 16) {
            throw new IllegalArgumentException("--shared-buffers must be at least 16 blocks, not " + sharedBuffers);
        }
        if (segmentBlocks < 1) {
            throw new IllegalArgumentException("segment size must be at least 1 block");
        }
        sessions = sessions == null || sessions.isEmpty() ? DEFAULT_SESSIONS : List.copyOf(sessions);
        for (int n : sessions) {
            if (n < 1 || n > MAX_SESSIONS) {
                throw new IllegalArgumentException("--sessions: " + n + " is out of range: valid values are 1.." + MAX_SESSIONS);
            }
        }
        cases = cases == null || cases.isEmpty() ? (pg == null ? ALL_CASES : PG_CASES) : List.copyOf(cases);
        for (String c : cases) {
            if (!ALL_CASES.contains(c)) {
                throw new IllegalArgumentException("--cases: unknown case \"" + c + "\"; use " + String.join(",", ALL_CASES));
            }
            if (pg != null && !PG_CASES.contains(c)) {
                throw new IllegalArgumentException("--cases: with --pgdata the drill runs the count(*) cases only ("
                        + String.join(",", PG_CASES) + "), not \"" + c + "\"");
            }
        }
        if (pg != null && seqHint) {
            throw new IllegalArgumentException("--seq-hint: not with --pgdata (the PostgreSQL files are read as PostgreSQL reads them)");
        }
    }

    /** The same options over the PostgreSQL heap {@code source}, its segments of {@code relsegSize} blocks. */
    public DrillOptions withPg(PgSource source, long relsegSize) {
        return new DrillOptions(rows, rounds, methods, eic, sharedBuffers, dataDir, resultsDir, relsegSize, seed, cases, fio, seqHint,
                vacuumBufferUsageLimitKb, sessions, source);
    }

    /** The same options with other cases. */
    public DrillOptions withCases(List<String> c) {
        return new DrillOptions(rows, rounds, methods, eic, sharedBuffers, dataDir, resultsDir, segmentBlocks, seed, c, fio, seqHint,
                vacuumBufferUsageLimitKb, sessions, pg);
    }

    /** The same options with fio on or off. */
    public DrillOptions withFio(boolean on) {
        return new DrillOptions(rows, rounds, methods, eic, sharedBuffers, dataDir, resultsDir, segmentBlocks, seed, cases, on, seqHint,
                vacuumBufferUsageLimitKb, sessions, pg);
    }

    /** The same options with the sequential-advice variants on or off. */
    public DrillOptions withSeqHint(boolean on) {
        return new DrillOptions(rows, rounds, methods, eic, sharedBuffers, dataDir, resultsDir, segmentBlocks, seed, cases, fio, on,
                vacuumBufferUsageLimitKb, sessions, pg);
    }

    /** The same options with the visibility case's VACUUM ring of {@code kb} kB (0: none). */
    public DrillOptions withVacuumBufferUsageLimit(long kb) {
        return new DrillOptions(rows, rounds, methods, eic, sharedBuffers, dataDir, resultsDir, segmentBlocks, seed, cases, fio, seqHint,
                kb, sessions, pg);
    }

    /** The same options with the concurrent case's numbers of sessions {@code n}. */
    public DrillOptions withSessions(List<Integer> n) {
        return new DrillOptions(rows, rounds, methods, eic, sharedBuffers, dataDir, resultsDir, segmentBlocks, seed, cases, fio, seqHint,
                vacuumBufferUsageLimitKb, n, pg);
    }

    /** Whether the case group ({@code seq}, {@code warm}, {@code bitmap}, {@code index}, {@code visibility}, {@code hot}, {@code concurrent}) runs. */
    public boolean runs(String group) {
        return cases.contains(group);
    }

    /** Parses {@code "seq,bitmap"}; empty or {@code all} = every case. */
    public static List<String> parseCases(String text) {
        if (text == null || text.isBlank() || text.trim().equals("all")) {
            return ALL_CASES;
        }
        return java.util.Arrays.stream(text.split(",")).map(String::trim).filter(x -> !x.isEmpty()).distinct().toList();
    }

    /** The drill's defaults, in {@code dataDir}. */
    public static DrillOptions defaults(Path dataDir, Path resultsDir) {
        return new DrillOptions(DEFAULT_ROWS, DEFAULT_ROUNDS, List.of(), DEFAULT_EIC, DEFAULT_SHARED_BUFFERS, dataDir, resultsDir,
                StorageManager.DEFAULT_SEGMENT_BLOCKS, 1, ALL_CASES, true);
    }

    /** Parses {@code "1,2,8,32"} (the concurrent case's sessions). */
    public static List<Integer> parseSessions(String text) {
        return numbers("--sessions", text, "1,2,8,32");
    }

    /** Parses {@code "1,16,64"}. */
    public static List<Integer> parseEic(String text) {
        return numbers("--eic", text, "1,16,64");
    }

    private static List<Integer> numbers(String option, String text, String example) {
        List<Integer> out = new java.util.ArrayList<>();
        for (String p : text.split(",")) {
            if (p.isBlank()) {
                continue;
            }
            try {
                out.add(Integer.parseInt(p.trim()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + ": \"" + p.trim() + "\" is not a number (use e.g. " + example + ")");
            }
        }
        return out;
    }

    /** Parses {@code "sync,worker"}; empty or {@code all} = every available method. */
    public static List<String> parseMethods(String text) {
        if (text == null || text.isBlank() || text.trim().equals("all")) {
            return List.of();
        }
        return java.util.Arrays.stream(text.split(",")).map(String::trim).filter(s -> !s.isEmpty()).distinct().toList();
    }
}
