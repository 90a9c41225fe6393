package org.pageio.pgdata;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The PostgreSQL installed on this machine, run for a test: {@code initdb}, {@code pg_ctl},
 * {@code psql}, {@code pg_checksums} from {@code pg_config --bindir}, else the highest
 * {@code /usr/lib/postgresql/N/bin}. PostgreSQL refuses to run as root, so a test running as root
 * runs them as the user {@code postgres} ({@code runuser -u postgres --}) on a directory that user
 * owns. Missing PostgreSQL is a failure saying how to get it ({@code ./pageio test} installs it).
 */
public final class PostgresServer implements AutoCloseable {

    /** What a program printed and how it exited. */
    public record Run(int exit, String out, String err) {
    }

    final Path bin;
    public final Path root;
    public final Path data;
    final Path socket;
    private final boolean asPostgres;

    public PostgresServer() throws IOException, InterruptedException {
        this.bin = findBin();
        this.asPostgres = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid") == 0; // PostgreSQL refuses root
        this.root = Files.createTempDirectory("pageio-pg-", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        this.data = root.resolve("data");
        this.socket = root;
        if (asPostgres) {
            check(run(List.of("chown", "postgres", root.toString()), false), "chown");
        }
    }

    static Path findBin() throws IOException, InterruptedException {
        try {
            Process p = new ProcessBuilder("pg_config", "--bindir").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (p.waitFor() == 0 && Files.isExecutable(Path.of(out, "initdb"))) {
                return Path.of(out);
            }
        } catch (IOException notInstalled) {
            // no pg_config on the PATH (Debian puts it there only with the dev package): look in /usr/lib/postgresql
        }
        Path lib = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(lib)) {
            try (Stream<Path> versions = Files.list(lib)) {
                Path best = versions.filter(v -> Files.isExecutable(v.resolve("bin/initdb")) && v.getFileName().toString().matches("\\d+"))
                        .max(Comparator.comparingInt(v -> Integer.parseInt(v.getFileName().toString()))).orElse(null);
                if (best != null) {
                    return best.resolve("bin");
                }
            }
        }
        throw new IllegalStateException("PostgreSQL is not installed (no pg_config --bindir, no /usr/lib/postgresql/N/bin/initdb):"
                + " ./pageio test installs Debian's postgresql; or apt-get install postgresql");
    }

    /** Runs a program of the installation (as {@code postgres} when root). */
    public Run pg(String program, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(bin.resolve(program).toString());
        cmd.addAll(List.of(args));
        return run(cmd, asPostgres);
    }

    Run run(List<String> command, boolean postgres) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        if (postgres) {
            cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        cmd.addAll(command);
        Path out = Files.createTempFile("pg-out", ".txt");
        Path err = Files.createTempFile("pg-err", ".txt");
        try {
            Process p = new ProcessBuilder(cmd).directory(root.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", cmd) + " did not finish in 120 s");
            }
            return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    static Run check(Run r, String what) {
        if (r.exit() != 0) {
            throw new IllegalStateException(what + " exited " + r.exit() + ": " + r.out() + r.err());
        }
        return r;
    }

    public void initdb() throws IOException, InterruptedException {
        check(pg("initdb", "--data-checksums", "--no-sync", "-A", "trust", "-U", "postgres", "-D", data.toString()), "initdb");
    }

    public void start() throws IOException, InterruptedException {
        start("");
    }

    /** Starts the server with {@code options} ({@code -c name=value …}) added to the test's own. */
    public void start(String options) throws IOException, InterruptedException {
        check(pg("pg_ctl", "start", "-w", "-D", data.toString(), "-l", root.resolve("server.log").toString(), "-o",
                "-c listen_addresses='' -k " + socket + " -c fsync=off " + options), "pg_ctl start");
    }

    public void stop(String mode) throws IOException, InterruptedException {
        check(pg("pg_ctl", "stop", "-w", "-m", mode, "-D", data.toString()), "pg_ctl stop -m " + mode);
    }

    /** Runs SQL in database postgres, stopping at the first error; returns what it printed, unaligned, tuples only. */
    public String sql(String sql) throws IOException, InterruptedException {
        return check(pg("psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", socket.toString(), "-d", "postgres", "-c", sql),
                "psql").out().strip();
    }

    /** Damages a cluster's file: XORs its byte at {@code at} with {@code mask}; returns the byte it was, for {@link #restore}. */
    public static byte flip(Path file, long at, int mask) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(at);
            byte original = f.readByte();
            f.seek(at);
            f.writeByte(original ^ mask);
            return original;
        }
    }

    /** Puts back the byte {@link #flip} changed. */
    public static void restore(Path file, long at, byte original) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(at);
            f.writeByte(original);
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        if (Files.exists(data.resolve("postmaster.pid"))) {
            pg("pg_ctl", "stop", "-w", "-m", "immediate", "-D", data.toString());
        }
        try (Stream<Path> all = Files.walk(root)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
