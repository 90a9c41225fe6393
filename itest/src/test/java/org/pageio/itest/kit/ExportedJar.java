package org.pageio.itest.kit;

import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The exported container, {@code app/target/pageio.jar}, run in a child JVM the way {@code ./pageio}
 * runs it: for the plain-JUnit ITs that drive the whole product from outside (exit codes, the exec
 * runner, the Web Console). Fails (never skips) when the jar was not built.
 */
public final class ExportedJar {

    /** A finished child: its exit code, standard output and standard error. */
    public record Run(int code, String out, String err) {}

    /** Longest a scripted run may take: a hang guard, not a speed test. */
    static final long EXEC_TIMEOUT_SECONDS = 180;

    private final File jar;

    private ExportedJar(File jar) {
        this.jar = jar;
    }

    /** The jar's file. */
    public Path path() {
        return jar.toPath();
    }

    /** The user's container, named by the system property {@code pageio.app.jar}; fails the test if it is missing. */
    public static ExportedJar require() {
        return require("pageio.app.jar", "app/target/pageio.jar");
    }

    /**
     * The measuring container ({@code ./pageio drill} and {@code ./pageio soak}: the user's container
     * plus the measure and fault bundles), named by {@code pageio.measure.jar}; fails the test if it is missing.
     */
    public static ExportedJar requireMeasuring() {
        return require("pageio.measure.jar", "app/target/pageio-measure.jar");
    }

    private static ExportedJar require(String property, String name) {
        String path = System.getProperty(property);
        File jar = path == null ? null : new File(path);
        if (jar == null || !jar.isFile()) {
            fail(name + " is not built (" + property + "=" + path + "): run mvn verify from the top");
        }
        return new ExportedJar(jar);
    }

    /** The command line: Java 25 of this test run, the flags {@code ./pageio} passes, {@code args}, the jar. */
    public List<String> java(Path data, String... args) {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
                "-Dstdout.encoding=UTF-8", "-Dstderr.encoding=UTF-8", "-Dpageio.data=" + data));
        cmd.addAll(List.of(args));
        cmd.add("-jar");
        cmd.add(jar.getAbsolutePath());
        return cmd;
    }

    /**
     * Runs {@code script} with the exec runner ({@code -Dpageio.exec}, no shell, no HTTP) on data
     * directory {@code data} and waits for the exit. A child still running after
     * {@link #EXEC_TIMEOUT_SECONDS} is killed (so it does not load the machine under later tests)
     * and the test fails with the tails of its output.
     */
    public Run exec(Path data, String script) throws Exception {
        return exec(data, script, List.of());
    }

    /** {@link #exec(Path, String)} with more JVM options {@code jvmOptions} before the jar. */
    public Run exec(Path data, String script, List<String> jvmOptions) throws Exception {
        Path out = Files.createTempFile(data, "out", ".txt");
        Path err = Files.createTempFile(data, "err", ".txt");
        List<String> args = new ArrayList<>(List.of("-Dgosh.args=--nointeractive", "-Dorg.apache.felix.http.enable=false",
                "-Dpageio.exec=" + script));
        args.addAll(jvmOptions);
        Process p = new ProcessBuilder(java(data, args.toArray(String[]::new)))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(EXEC_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
            throw new AssertionError("the container did not exit within " + EXEC_TIMEOUT_SECONDS + " s and was killed;"
                    + " script: " + script + "\nstdout tail: " + tail(Files.readString(out))
                    + "\nstderr tail: " + tail(Files.readString(err)));
        }
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    /** The HTTP status of a GET on {@code uri} with basic {@code credentials} (null: none); -1 while nobody answers. */
    public static int status(URI uri, String credentials) {
        try {
            HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
            c.setConnectTimeout(2000);
            c.setReadTimeout(5000);
            if (credentials != null) {
                c.setRequestProperty("Authorization", "Basic "
                        + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
            }
            int code = c.getResponseCode();
            c.disconnect();
            return code;
        } catch (IOException notYet) {
            return -1;
        }
    }

    /** The last 2,000 characters of {@code s}, for failure messages. */
    public static String tail(String s) {
        return s.length() <= 2000 ? s : "…" + s.substring(s.length() - 2000);
    }
}
