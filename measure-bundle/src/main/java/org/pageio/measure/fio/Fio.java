package org.pageio.measure.fio;

import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

/**
 * Runs fio: {@link #run} starts one {@link FioJob} ({@link #command}), waits for it, and reads
 * fio's figures from its JSON output ({@link FioResult#parse}). Everything that can go wrong is one
 * {@link FioException} line: fio not on {@code PATH} ({@link #locate}: "apt-get install fio"), a
 * command that does not start, exits non-zero (with the tail of fio's stderr), runs longer than
 * 30 minutes, or prints no figures — each with the command. Immutable and thread-safe; each run
 * is its own process.
 */
public final class Fio {

    /** How to install it, as every "not installed" message says. */
    public static final String INSTALL = "apt-get install fio";

    private static final long TIMEOUT_MINUTES = 30;
    private static final int STDERR_TAIL_LINES = 3;

    private final Path executable;

    /** fio at {@code executable}. */
    public Fio(Path executable) {
        this.executable = executable;
    }

    /** Where fio is on {@code PATH}, if anywhere. */
    public static Optional<Path> find() {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path f = Path.of(dir, "fio");
            if (Files.isRegularFile(f) && Files.isExecutable(f)) {
                return Optional.of(f.toAbsolutePath());
            }
        }
        return Optional.empty();
    }

    /** fio on {@code PATH}; fails with one line saying how to install it. */
    public static Fio locate() throws FioException {
        return new Fio(find().orElseThrow(() -> new FioException("fio is not installed (no fio on PATH): " + INSTALL)));
    }

    public Path executable() {
        return executable;
    }

    /** The command line that runs {@code job}. */
    public List<String> command(FioJob job) {
        List<String> c = new ArrayList<>();
        c.add(executable.toString());
        c.addAll(job.arguments());
        return c;
    }

    /** fio's {@code --version} line, e.g. {@code fio-3.33}. */
    public String version() throws IOException {
        List<String> cmd = List.of(executable.toString(), "--version");
        Output o = exec(cmd);
        if (o.exit != 0) {
            throw failure("fio --version exited with " + o.exit, o, cmd);
        }
        return o.out.strip();
    }

    /**
     * Runs {@code job} and returns fio's figures. A replay's {@code ioBytes} is its {@code total_ios}
     * × the block size (fio 3.33 leaves a replay's last {@code depth - 1} reads out of
     * {@code io_bytes}, not out of {@code total_ios}; every replayed read is one block).
     *
     * @throws FioException          one line: what failed, fio's stderr tail, the command
     * @throws InterruptedIOException when the thread was interrupted (fio is killed)
     */
    public FioResult run(FioJob job) throws IOException {
        List<String> cmd = command(job);
        Output o = exec(cmd);
        if (o.exit != 0) {
            throw failure("fio exited with " + o.exit, o, cmd);
        }
        FioResult r;
        try {
            r = FioResult.parse(o.out, !job.kind().reads());
        } catch (FioException e) {
            throw failure(e.getMessage(), o, cmd);
        }
        if (job.kind() == FioJob.Kind.REPLAY) {
            r = new FioResult(r.runtimeNanos(), r.ios() * job.blockSize(), r.ios(), r.bwBytes(), r.iops(), r.cpuNanos());
        }
        return r;
    }

    private record Output(int exit, String out, String err) {
    }

    private static Output exec(List<String> cmd) throws IOException {
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        } catch (IOException e) {
            throw new FioException("fio could not be started (" + e.getMessage() + "; " + INSTALL + "); command: "
                    + String.join(" ", cmd));
        }
        try {
            // stderr on a thread of its own, so that neither pipe can fill up
            var errReader = new FutureTask<>(() -> p.getErrorStream().readAllBytes());
            Thread.ofVirtual().start(errReader);
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new FioException("fio did not finish within " + TIMEOUT_MINUTES + " minutes; command: " + String.join(" ", cmd));
            }
            String err;
            try {
                err = new String(errReader.get(), StandardCharsets.UTF_8);
            } catch (ExecutionException e) {
                err = "";
            }
            return new Output(p.exitValue(), out, err);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while fio ran: " + String.join(" ", cmd));
        }
    }

    /** One line: {@code what}, the tail of fio's stderr (or its error lines on stdout), the command. */
    private static FioException failure(String what, Output o, List<String> cmd) {
        List<String> lines = o.err.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
        if (lines.isEmpty()) {
            lines = o.out.lines().map(String::strip).filter(l -> l.contains("error") || l.startsWith("fio:")).toList();
        }
        String tail = String.join(" / ", lines.subList(Math.max(0, lines.size() - STDERR_TAIL_LINES), lines.size()));
        return new FioException(what + ": " + (tail.isEmpty() ? "no message from fio" : tail) + "; command: "
                + String.join(" ", cmd));
    }
}
