package org.pageio.itest.kit;

import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The exported container run as a user runs {@code ./pageio shell}: the interactive Gogo shell
 * reading a pipe the test types commands into, HTTP (the Web Console, {@code /metrics}) on a free
 * port of 127.0.0.1, the output in {@code <data>/console.log}. For the plain-JUnit ITs that drive
 * the Web Console and the HTTP endpoints from outside. Close it to stop the JVM.
 */
public final class ConsoleShell implements AutoCloseable {

    /** Longest a command or the console's start may take: a hang guard, not a speed test. */
    static final long WAIT_MILLIS = 90_000;

    private final Process process;
    private final Path data;
    private final Path log;
    private final int port;

    private ConsoleShell(Process process, Path data, Path log, int port) {
        this.process = process;
        this.data = data;
        this.log = log;
        this.port = port;
    }

    /** Starts {@code jar} on data directory {@code data} with HTTP on a free port. */
    public static ConsoleShell start(ExportedJar jar, Path data) throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path log = data.resolve("console.log");
        Process p = new ProcessBuilder(jar.java(data, "-Dorg.osgi.service.http.port=" + port))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new ConsoleShell(p, data, log, port);
    }

    /** An empty directory {@code name} under {@code parent}, whatever was there removed. */
    public static Path freshData(Path parent, String name) throws IOException {
        Path dir = parent.resolve(name);
        if (Files.exists(dir)) {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        return Files.createDirectories(dir);
    }

    public int port() {
        return port;
    }

    /** {@code http://127.0.0.1:<port>}. */
    public String origin() {
        return "http://127.0.0.1:" + port;
    }

    /** What the container printed so far. */
    public String log() throws IOException {
        return Files.readString(log);
    }

    /**
     * Waits until {@code path} (e.g. {@code /system/console/pageio}) answers 200 with the generated
     * Web Console password; returns the password.
     */
    public String awaitConsole(String path) throws Exception {
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        Path file = data.resolve("webconsole.password");
        int code = -1;
        while (System.currentTimeMillis() < deadline) {
            if (Files.isRegularFile(file)) {
                String password = Files.readString(file).strip();
                code = ExportedJar.status(URI.create(origin() + path), "admin:" + password);
                if (code == 200) {
                    return password;
                }
            }
            Thread.sleep(250);
        }
        throw new AssertionError(path + " did not answer 200 within " + WAIT_MILLIS / 1000 + " s (last " + code + "); log:\n"
                + log());
    }

    /** Types {@code line} into the shell until the log shows {@code expect} (again when the command was not found yet). */
    public void command(String line, String expect) throws Exception {
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        while (System.currentTimeMillis() < deadline) {
            int from = log().length();
            OutputStream in = process.getOutputStream();
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
            while (System.currentTimeMillis() < deadline) {
                String added = log().substring(from);
                if (added.contains(expect)) {
                    return;
                }
                if (added.contains("Command not found")) {
                    break;
                }
                Thread.sleep(200);
            }
            Thread.sleep(500);
        }
        throw new AssertionError("'" + line + "' did not print '" + expect + "' within " + WAIT_MILLIS / 1000 + " s");
    }

    /**
     * A GET ({@code form} null) or a form POST with basic credentials {@code user:password}
     * ({@code password} null: no credentials), and the {@code Origin} and {@code Referer} headers
     * given (null: none), as a browser, a scraper or another site's page would send it.
     */
    public static HttpResponse<String> http(String url, String password, String form, String origin, String referer)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30));
        if (password != null) {
            b.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(("admin:" + password)
                    .getBytes(StandardCharsets.UTF_8)));
        }
        if (origin != null) {
            b.header("Origin", origin);
        }
        if (referer != null) {
            b.header("Referer", referer);
        }
        if (form != null) {
            b.header("Content-Type", "application/x-www-form-urlencoded").POST(HttpRequest.BodyPublishers.ofString(form));
        }
        try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
            return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    /** Stops the container (forcibly when it has not ended 20 s after being asked). */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
