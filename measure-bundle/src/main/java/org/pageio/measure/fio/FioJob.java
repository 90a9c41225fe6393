package org.pageio.measure.fio;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * One fio job, as the drill and the benchmarks run it, built in one place: its command-line
 * options ({@link #arguments()}) always name the job, the files (or the iolog), the block size,
 * the depth, {@code --direct}, the engine and {@code --output-format=json}; reads are
 * {@code --readonly}. Kinds:
 * <ul>
 * <li>{@link #sequentialRead}: {@code --rw=read} through the files one after the other
 * ({@code --file_service_type=sequential});</li>
 * <li>{@link #randomRead}: {@code --rw=randread} (fio's random map: each block at most once);</li>
 * <li>{@link #replay}: {@code --read_iolog} of given blocks in a given order ({@link #writeIolog});</li>
 * <li>{@link #sequentialWrite}: {@code --rw=write} of {@code size} bytes into one file,
 * {@code --end_fsync=1}.</li>
 * </ul>
 * Then optional limits: {@link #withSize} ({@code --size}, the region of each file),
 * {@link #withIoSize} ({@code --io_size}, bytes to transfer), {@link #withRuntime}
 * ({@code --runtime}, a cap in seconds), {@link #withInvalidate} ({@code --invalidate}), the
 * engine ({@link #withEngine}: io_uring by default, libaio, psync), and for a sequential read of one
 * file, {@link #withJobs} (several jobs at once, each over its own region). Immutable and thread-safe.
 */
public final class FioJob {

    /** What the job does. */
    public enum Kind {
        SEQ_READ("read"), RAND_READ("randread"), REPLAY("replay"), SEQ_WRITE("write");

        private final String rw;

        Kind(String rw) {
            this.rw = rw;
        }

        /** fio's {@code --rw} value ({@code replay} for an iolog replay, which has none). */
        public String rw() {
            return rw;
        }

        /** Whether the job reads (its figures are in fio's {@code read} section). */
        public boolean reads() {
            return this != SEQ_WRITE;
        }
    }

    /** fio's {@code --ioengine}. */
    public enum Engine {
        IO_URING("io_uring"), LIBAIO("libaio"), PSYNC("psync");

        private final String fioName;

        Engine(String fioName) {
            this.fioName = fioName;
        }

        /** The name fio knows it by. */
        public String fioName() {
            return fioName;
        }

        /** The engine fio calls {@code name}; one line naming the valid ones otherwise. */
        public static Engine parse(String name) {
            for (Engine e : values()) {
                if (e.fioName.equals(name)) {
                    return e;
                }
            }
            throw new IllegalArgumentException("fio engine must be io_uring, libaio or psync, not " + name);
        }
    }

    private final Kind kind;
    private final String name;
    private final List<Path> files;
    private final Path iolog;
    private final int blockSize;
    private final int depth;
    private final boolean direct;
    private final Engine engine;
    private final long size;
    private final long ioSize;
    private final int runtimeSeconds;
    /** null: fio's default. */
    private final Boolean invalidate;
    /** Copies of the job fio runs at once ({@code --numjobs}), 1 = one. */
    private final int jobs;

    private FioJob(Kind kind, String name, List<Path> files, Path iolog, int blockSize, int depth, boolean direct, Engine engine,
            long size, long ioSize, int runtimeSeconds, Boolean invalidate) {
        this(kind, name, files, iolog, blockSize, depth, direct, engine, size, ioSize, runtimeSeconds, invalidate, 1);
    }

    private FioJob(Kind kind, String name, List<Path> files, Path iolog, int blockSize, int depth, boolean direct, Engine engine,
            long size, long ioSize, int runtimeSeconds, Boolean invalidate, int jobs) {
        if (blockSize <= 0 || depth <= 0) {
            throw new IllegalArgumentException("fio job: block size and depth must be positive, not " + blockSize + " and " + depth);
        }
        if (jobs < 1 || jobs > 1 && (kind != Kind.SEQ_READ || files.size() != 1 || size <= 0)) {
            throw new IllegalArgumentException("fio job: " + jobs + " jobs: several jobs read disjoint regions of one file"
                    + " (a sequential read of one file with a size), not " + kind.rw + " of " + files.size() + " file(s)");
        }
        if (kind != Kind.REPLAY && files.isEmpty()) {
            throw new IllegalArgumentException("fio job: no file to " + kind.rw);
        }
        this.kind = kind;
        this.name = Objects.requireNonNull(name);
        this.files = List.copyOf(files);
        this.iolog = iolog;
        this.blockSize = blockSize;
        this.depth = depth;
        this.direct = direct;
        this.engine = Objects.requireNonNull(engine);
        this.size = size;
        this.ioSize = ioSize;
        this.runtimeSeconds = runtimeSeconds;
        this.invalidate = invalidate;
        this.jobs = jobs;
    }

    /** Sequential reads of {@code blockSize} bytes at {@code depth} through {@code files}, one file after the other. */
    public static FioJob sequentialRead(List<Path> files, int blockSize, int depth, boolean direct) {
        return new FioJob(Kind.SEQ_READ, "pageio", files, null, blockSize, depth, direct, Engine.IO_URING, 0, 0, 0, null);
    }

    /** Random reads of {@code blockSize} bytes at {@code depth} over {@code files}, each block at most once. */
    public static FioJob randomRead(List<Path> files, int blockSize, int depth, boolean direct) {
        return new FioJob(Kind.RAND_READ, "pageio", files, null, blockSize, depth, direct, Engine.IO_URING, 0, 0, 0, null);
    }

    /**
     * The reads of {@code iolog} (written by {@link #writeIolog}, every read {@code blockSize}
     * bytes), in its order, at {@code depth}.
     */
    public static FioJob replay(Path iolog, int blockSize, int depth, boolean direct) {
        return new FioJob(Kind.REPLAY, "pageio", List.of(), Objects.requireNonNull(iolog), blockSize, depth, direct,
                Engine.IO_URING, 0, 0, 0, null);
    }

    /** Sequential writes of {@code blockSize} bytes at {@code depth}: {@code size} bytes into {@code file}, fsynced at the end. */
    public static FioJob sequentialWrite(Path file, long size, int blockSize, int depth, boolean direct) {
        if (size <= 0) {
            throw new IllegalArgumentException("fio job: the size of a write must be positive, not " + size);
        }
        return new FioJob(Kind.SEQ_WRITE, "pageio", List.of(file), null, blockSize, depth, direct, Engine.IO_URING, size, 0, 0,
                null);
    }

    /** This job named {@code n} ({@code --name}). */
    public FioJob withName(String n) {
        return new FioJob(kind, n, files, iolog, blockSize, depth, direct, engine, size, ioSize, runtimeSeconds, invalidate, jobs);
    }

    /** This job through engine {@code e}. */
    public FioJob withEngine(Engine e) {
        return new FioJob(kind, name, files, iolog, blockSize, depth, direct, e, size, ioSize, runtimeSeconds, invalidate, jobs);
    }

    /** This job at depth {@code d}. */
    public FioJob withDepth(int d) {
        return new FioJob(kind, name, files, iolog, blockSize, d, direct, engine, size, ioSize, runtimeSeconds, invalidate, jobs);
    }

    /** This job over the first {@code bytes} of each file ({@code --size}); 0 = the whole files. */
    public FioJob withSize(long bytes) {
        return new FioJob(kind, name, files, iolog, blockSize, depth, direct, engine, bytes, ioSize, runtimeSeconds, invalidate, jobs);
    }

    /** This job transferring {@code bytes} in all ({@code --io_size}); 0 = the region once. */
    public FioJob withIoSize(long bytes) {
        return new FioJob(kind, name, files, iolog, blockSize, depth, direct, engine, size, bytes, runtimeSeconds, invalidate, jobs);
    }

    /** This job stopped after {@code seconds} if it has not finished ({@code --runtime}); 0 = no cap. */
    public FioJob withRuntime(int seconds) {
        return new FioJob(kind, name, files, iolog, blockSize, depth, direct, engine, size, ioSize, seconds, invalidate, jobs);
    }

    /** This job with {@code --invalidate=1} or {@code 0} (fio's page-cache invalidation of the files before the job). */
    public FioJob withInvalidate(boolean on) {
        return new FioJob(kind, name, files, iolog, blockSize, depth, direct, engine, size, ioSize, runtimeSeconds, on, jobs);
    }

    /**
     * This sequential read of one file as {@code n} jobs at once, each at this job's depth over its
     * own {@link #withSize size}-byte region: job {@code k} reads
     * {@code [k × size, (k + 1) × size)} ({@code --numjobs}, {@code --offset_increment=size}), and
     * the figures are the group's ({@code --group_reporting}: every job's bytes and I/Os, the
     * longest job's runtime). Set the size first.
     *
     * @throws IllegalArgumentException unless this is a sequential read of one file with a size, or
     *                                  when {@code n} is below 1
     * @since 1.1.0
     */
    public FioJob withJobs(int n) {
        return new FioJob(kind, name, files, iolog, blockSize, depth, direct, engine, size, ioSize, runtimeSeconds, invalidate, n);
    }

    public Kind kind() {
        return kind;
    }

    /** Jobs run at once ({@link #withJobs}), 1 for one. */
    public int jobs() {
        return jobs;
    }

    public String name() {
        return name;
    }

    public List<Path> files() {
        return files;
    }

    /** The iolog a replay reads, null for the other kinds. */
    public Path iolog() {
        return iolog;
    }

    public int blockSize() {
        return blockSize;
    }

    public int depth() {
        return depth;
    }

    public boolean direct() {
        return direct;
    }

    public Engine engine() {
        return engine;
    }

    /** fio's options for this job, without the executable. */
    public List<String> arguments() {
        List<String> a = new ArrayList<>();
        a.add("--name=" + name);
        if (kind == Kind.REPLAY) {
            a.add("--read_iolog=" + iolog.toAbsolutePath());
        } else {
            StringBuilder names = new StringBuilder();
            for (Path f : files) {
                names.append(names.isEmpty() ? "" : ":").append(f.toAbsolutePath().toString().replace(":", "\\:"));
            }
            a.add("--filename=" + names);
        }
        if (kind.reads()) {
            a.add("--readonly");
        }
        if (kind != Kind.REPLAY) {
            a.add("--rw=" + kind.rw);
            a.add("--bs=" + size(blockSize));
        }
        a.add("--iodepth=" + depth);
        a.add("--direct=" + (direct ? 1 : 0));
        a.add("--ioengine=" + engine.fioName);
        a.add("--output-format=json");
        if (kind == Kind.SEQ_READ) {
            a.add("--file_service_type=sequential");
        }
        if (size > 0) {
            a.add("--size=" + size);
        }
        if (ioSize > 0) {
            a.add("--io_size=" + ioSize);
        }
        if (runtimeSeconds > 0) {
            a.add("--runtime=" + runtimeSeconds);
        }
        if (invalidate != null) {
            a.add("--invalidate=" + (invalidate ? 1 : 0));
        }
        if (kind == Kind.SEQ_WRITE) {
            a.add("--end_fsync=1");
        }
        if (jobs > 1) {
            a.add("--numjobs=" + jobs);
            a.add("--offset_increment=" + size);
            a.add("--group_reporting");
        }
        return a;
    }

    /** In words, for a report or an error: {@code "randread 8k at depth 64, O_DIRECT, io_uring"}. */
    public String describe() {
        String what = kind == Kind.REPLAY ? "replay of " + iolog.getFileName() + " (" + size(blockSize) + " reads)"
                : kind.rw + " " + size(blockSize);
        return String.format(Locale.ROOT, "%s%s at depth %d%s, %s, %s", jobs > 1 ? jobs + " jobs of " : "", what, depth,
                jobs > 1 ? " each" : "", direct ? "O_DIRECT" : "buffered", engine.fioName);
    }

    @Override
    public String toString() {
        return "fio job " + name + ": " + describe();
    }

    private static String size(int bytes) {
        return bytes % 1024 == 0 ? bytes / 1024 + "k" : Integer.toString(bytes);
    }

    /**
     * Writes fio's version 2 iolog of {@code blockSize}-byte reads of {@code blocks} (in that order)
     * of the relation whose segment files are {@code files}, {@code segmentBlocks} blocks each, to
     * {@code log}: what {@link #replay} reads.
     *
     * @throws IOException naming the block when one lies beyond the files
     */
    public static void writeIolog(Path log, List<Path> files, long segmentBlocks, int blockSize, long[] blocks) throws IOException {
        try (var w = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
            w.write("fio version 2 iolog\n");
            for (Path f : files) {
                w.write(f.toAbsolutePath() + " add\n");
            }
            for (Path f : files) {
                w.write(f.toAbsolutePath() + " open\n");
            }
            for (long b : blocks) {
                int seg = (int) (b / segmentBlocks);
                if (seg >= files.size()) {
                    throw new IOException("block " + b + " lies beyond the " + files.size() + " segment file(s) of the iolog");
                }
                w.write(files.get(seg).toAbsolutePath() + " read " + (b % segmentBlocks) * blockSize + " " + blockSize + "\n");
            }
            for (Path f : files) {
                w.write(f.toAbsolutePath() + " close\n");
            }
        }
    }
}
