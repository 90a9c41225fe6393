package org.pageio.measure.drill;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * fio as a baseline on the drill's own segment files, all with fio's {@code io_uring} engine and
 * {@code --readonly}: sequential 128 KiB reads, buffered and direct, at the depth of the case's
 * {@code effective_io_concurrency} (so each eic case has its own fio figure); for the bitmap and
 * index scans, the scan's own 8 KiB reads replayed from an iolog (the same blocks in the same order,
 * direct) at the same depth, and random 8 KiB reads at depth 64, direct, of as many bytes: the
 * device's ceiling. The time is fio's own {@code read.runtime} (start-up excluded). Stateless; any thread.
 */
final class FioBaseline {

    /** The fio jobs of the drill. */
    enum Job {
        SEQ_BUFFERED("fio seq buffered", "read", 128, 0, false),
        SEQ_DIRECT("fio seq direct", "read", 128, 0, true),
        /** The scan's reads replayed ({@code --read_iolog}) at the scan's depth: the fair yardstick of a random scan. */
        SAME_READS("fio same reads", "replay", 8, 0, true),
        /** Random reads of as many bytes at depth 64: what the device gives at a full queue. */
        RAND_CEILING("fio rand depth 64", "randread", 8, 64, true);

        final String series;
        final String rw;
        final int kib;
        /** Fixed I/O depth, or 0: the case's effective_io_concurrency (at least 1). */
        final int depth;
        final boolean direct;

        Job(String series, String rw, int kib, int depth, boolean direct) {
            this.series = series;
            this.rw = rw;
            this.kib = kib;
            this.depth = depth;
            this.direct = direct;
        }

        /** The depth this job runs at in a case of {@code effective_io_concurrency} {@code eic}. */
        int depth(int eic) {
            return depth > 0 ? depth : Math.max(1, eic);
        }

        String description(int eic) {
            if (this == SAME_READS) {
                return String.format(Locale.ROOT, "fio replaying the scan's %d KiB reads in its order (iolog) at depth %d, O_DIRECT,"
                        + " io_uring engine", kib, depth(eic));
            }
            return String.format(Locale.ROOT, "fio %s, %d KiB at depth %d, %s, io_uring engine", rw, kib, depth(eic),
                    direct ? "O_DIRECT" : "buffered");
        }

        static Job bySeries(String name) {
            for (Job j : values()) {
                if (j.series.equals(name)) {
                    return j;
                }
            }
            return null;
        }
    }

    /**
     * One fio run.
     *
     * @param runtimeNanos fio's read runtime
     * @param ioBytes      bytes read
     * @param ios          I/Os completed
     * @param cpuNanos     fio's CPU time (usr_cpu + sys_cpu of its job runtime), -1 if its output has none
     */
    record Result(long runtimeNanos, long ioBytes, long ios, long cpuNanos) {
    }

    private FioBaseline() {
    }

    /** Where fio is on PATH, or null. */
    static String path() {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            File f = new File(dir, "fio");
            if (f.isFile() && f.canExecute()) {
                return f.getAbsolutePath();
            }
        }
        return null;
    }

    /** One line for the report. */
    static String note(boolean enabled) {
        return note(path(), enabled);
    }

    /** One line for the report, fio being at {@code p} (null = not installed). */
    static String note(String p, boolean enabled) {
        if (p == null) {
            return "fio is not installed: apt-get install fio (there is no fio baseline in this run)";
        }
        return enabled ? "fio (" + p + ") ran on the same files, cold the same way"
                : "fio is installed (" + p + ") but was switched off for this run (--no-fio)";
    }

    /**
     * Writes fio's version 2 iolog of 8 KiB reads of {@code blocks} (in that order) of the relation
     * whose segment files are {@code files}, {@code segmentBlocks} blocks each, to {@code log}.
     */
    static void writeIolog(Path log, List<Path> files, long segmentBlocks, long[] blocks) throws IOException {
        int bs = Job.SAME_READS.kib * 1024;
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
                w.write(files.get(seg).toAbsolutePath() + " read " + (b % segmentBlocks) * bs + " " + bs + "\n");
            }
            for (Path f : files) {
                w.write(f.toAbsolutePath() + " close\n");
            }
        }
    }

    /** The command line of {@link Job#SAME_READS} replaying {@code iolog} at {@code depth}. */
    static List<String> replayCommand(String fio, int depth, Path iolog) {
        return List.of(fio, "--name=pageio-drill", "--read_iolog=" + iolog.toAbsolutePath(), "--readonly",
                "--iodepth=" + depth, "--direct=1", "--ioengine=io_uring", "--output-format=json");
    }

    /** The command line of one job at {@code depth} over {@code files}; {@code ioBytes} 0 = the whole files once. */
    static List<String> command(String fio, Job job, int depth, List<Path> files, long ioBytes) {
        StringBuilder names = new StringBuilder();
        for (Path f : files) {
            names.append(names.isEmpty() ? "" : ":").append(f.toAbsolutePath().toString().replace(":", "\\:"));
        }
        List<String> cmd = new ArrayList<>(List.of(fio, "--name=pageio-drill", "--filename=" + names, "--readonly",
                "--rw=" + job.rw, "--bs=" + job.kib + "k", "--iodepth=" + depth, "--direct=" + (job.direct ? 1 : 0),
                "--ioengine=io_uring", "--output-format=json"));
        if (job.rw.equals("read")) {
            cmd.add("--file_service_type=sequential");
        }
        if (ioBytes > 0) {
            cmd.add("--io_size=" + ioBytes);
        }
        return cmd;
    }

    /**
     * Runs one job; fails with one line naming the job, the exit code and fio's first error line.
     */
    static Result run(String fio, Job job, int depth, List<Path> files, long ioBytes) throws IOException {
        return run(job, command(fio, job, depth, files, ioBytes));
    }

    /** Runs {@link Job#SAME_READS} over {@code iolog} at {@code depth}; fails as {@link #run(String, Job, int, List, long)}. */
    static Result replay(String fio, int depth, Path iolog) throws IOException {
        Result r = run(Job.SAME_READS, replayCommand(fio, depth, iolog));
        // fio 3.33's replay leaves the last depth - 1 reads out of read.io_bytes (not out of total_ios):
        // every replayed read is one block
        return new Result(r.runtimeNanos(), r.ios() * Job.SAME_READS.kib * 1024L, r.ios(), r.cpuNanos());
    }

    private static Result run(Job job, List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        byte[] err;
        String out = "";
        try {
            // stderr is small; read it on a thread of its own so neither pipe can fill up
            var errReader = new java.util.concurrent.FutureTask<>(() -> p.getErrorStream().readAllBytes());
            Thread.ofVirtual().start(errReader);
            out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IOException(job.series + ": fio did not finish within 30 minutes");
            }
            err = errReader.get();
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("drill interrupted while fio ran");
        } catch (java.util.concurrent.ExecutionException e) {
            err = new byte[0];
        }
        if (p.exitValue() != 0) {
            String first = new String(err, StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).findFirst()
                    .orElse(out.lines().filter(l -> l.contains("error") || l.startsWith("fio:")).findFirst().orElse("no message"));
            throw new IOException(job.series + ": fio exited with " + p.exitValue() + ": " + first.strip());
        }
        return parse(job, out);
    }

    private static final Pattern READ = Pattern.compile("\"read\"\\s*:\\s*\\{");

    /** Reads {@code jobs[0].read.io_bytes}, {@code runtime} (ms) and {@code total_ios} from fio's JSON. */
    static Result parse(Job job, String json) throws IOException {
        Matcher m = READ.matcher(json);
        if (!m.find()) {
            throw new IOException(job.series + ": fio's output has no \"read\" section");
        }
        String rest = json.substring(m.end());
        long bytes = field(job, rest, "io_bytes");
        long runtimeMs = field(job, rest, "runtime");
        long ios = field(job, rest, "total_ios");
        return new Result(runtimeMs * 1_000_000L, bytes, ios, cpuNanos(json));
    }

    private static final Pattern JOB_RUNTIME = Pattern.compile("\"job_runtime\"\\s*:\\s*(\\d+)");
    private static final Pattern USR = Pattern.compile("\"usr_cpu\"\\s*:\\s*([0-9.eE+-]+)");
    private static final Pattern SYS = Pattern.compile("\"sys_cpu\"\\s*:\\s*([0-9.eE+-]+)");

    /** fio reports CPU as percentages of the job's runtime: (usr_cpu + sys_cpu) / 100 × job_runtime; -1 if absent. */
    static long cpuNanos(String json) {
        Matcher rt = JOB_RUNTIME.matcher(json);
        Matcher u = USR.matcher(json);
        Matcher sy = SYS.matcher(json);
        if (!rt.find() || !u.find() || !sy.find()) {
            return -1;
        }
        try {
            return (long) ((Double.parseDouble(u.group(1)) + Double.parseDouble(sy.group(1))) / 100 * Long.parseLong(rt.group(1))
                    * 1_000_000L);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static long field(Job job, String text, String name) throws IOException {
        Matcher m = Pattern.compile("\"" + name + "\"\\s*:\\s*(\\d+)").matcher(text);
        if (!m.find()) {
            throw new IOException(job.series + ": fio's output has no read." + name);
        }
        return Long.parseLong(m.group(1));
    }
}
