package org.pageio.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.shell.command.Commands;

/**
 * {@code pageio:pgcount} typed into Gogo's real command processor over a real buffer manager, on a
 * cluster the installed PostgreSQL's {@code initdb} writes (as {@code postgres} when the test runs as
 * root; missing PostgreSQL fails the test): {@code pg_database} ({@code global/1262}) holds
 * {@code template1}, {@code template0} and {@code postgres}. Bad arguments and a directory that is no
 * cluster fail the command. (The visibility rules against PostgreSQL's own {@code count(*)}:
 * pgdata-bundle's {@code PgHeapScanTest}.)
 */
class PgCountCommandTest {

    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();
    private CommandProcessorImpl gogo;

    @BeforeEach
    void start() throws Exception {
        BufferManagerCore bufmgr = BufferManagerCore.open(dir.resolve("pageio"),
                new BufMgrSettings.Builder().sharedBuffers(256).maxSessions(4).build(), new SyncIoMethod());
        open.add(bufmgr);
        ThreadIOImpl threadIo = new ThreadIOImpl();
        threadIo.start();
        open.add(threadIo::stop);
        gogo = new CommandProcessorImpl(threadIo);
        open.add(gogo::stop);
        gogo.addCommand(Commands.PAGEIO, new PgCountCommand(bufmgr), "pgcount");
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private Object run(String line) throws Exception {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        try (CommandSession s = gogo.createSession(InputStream.nullInputStream(), out, out)) {
            return s.execute(line);
        }
    }

    @Test
    void pgDatabaseOfAFreshClusterHoldsItsThreeDatabases() throws Exception {
        Path root = Files.createTempDirectory("pageio-pgcount-");
        try {
            Path data = root.resolve("data");
            boolean root0 = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid") == 0; // PostgreSQL refuses root
            List<String> cmd = new ArrayList<>();
            if (root0) {
                assertEquals(0, new ProcessBuilder("chown", "postgres", root.toString()).inheritIO().start().waitFor());
                cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
            }
            cmd.addAll(List.of(initdb().toString(), "--data-checksums", "--no-sync", "-A", "trust", "-U", "postgres", "-D",
                    data.toString()));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(root.resolve("initdb.log").toFile()).start();
            assertEquals(0, p.waitFor(), () -> read(root.resolve("initdb.log")));
            String out = String.valueOf(run("pageio:pgcount --pgdata " + data + " global/1262"));
            assertTrue(out.startsWith("count: 3\nall_visible: "), out);
            assertTrue(out.matches("(?s).*\nblocks: 1 \\(\\d with PD_ALL_VISIBLE\\), tuples: \\d+, decided by pg_xact: \\d+"), out);
            Exception notHeap = assertThrows(Exception.class, () -> run("pageio:pgcount --pgdata " + data + " base/x/1"));
            assertTrue(notHeap.getMessage().startsWith("pageio:pgcount: \"base/x/1\" is not a relation's path"), notHeap.getMessage());
        } finally {
            try (Stream<Path> all = Files.walk(root)) {
                for (Path f : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(f);
                }
            }
        }
    }

    @Test
    void badArgumentsAndNoClusterFailTheCommand() throws Exception {
        Exception usage = assertThrows(Exception.class, () -> run("pageio:pgcount base/5/1"));
        assertTrue(usage.getMessage().startsWith("pageio:pgcount: usage: pageio:pgcount --pgdata DIR RELPATH"), usage.getMessage());
        Path empty = Files.createDirectory(dir.resolve("empty"));
        Exception e = assertThrows(Exception.class, () -> run("pageio:pgcount --pgdata " + empty + " base/5/1"));
        assertTrue(e.getMessage().startsWith("pageio:pgcount: could not open file \"" + empty.resolve("global/pg_control")), e.getMessage());
    }

    /**
     * The highest {@code /usr/lib/postgresql/N/bin/initdb}; missing PostgreSQL fails the test. Not
     * pgdata-bundle's test-jar {@code PostgresServer}: shell-bundle is part of the released kit
     * ({@code ./pageio install}), which is built with {@code -Dmaven.test.skip=true}, so no test-jar
     * exists for a test-scoped dependency on it to resolve.
     */
    private static Path initdb() throws Exception {
        Path lib = Path.of("/usr/lib/postgresql");
        assertTrue(Files.isDirectory(lib), "PostgreSQL is not installed (no /usr/lib/postgresql): ./pageio test installs it");
        try (Stream<Path> versions = Files.list(lib)) {
            return versions.filter(v -> v.getFileName().toString().matches("\\d+") && Files.isExecutable(v.resolve("bin/initdb")))
                    .max(Comparator.comparingInt(v -> Integer.parseInt(v.getFileName().toString())))
                    .orElseThrow(() -> new AssertionError("no /usr/lib/postgresql/N/bin/initdb: ./pageio test installs PostgreSQL"))
                    .resolve("bin/initdb");
        }
    }

    private static String read(Path f) {
        try {
            return Files.readString(f);
        } catch (Exception e) {
            return e.toString();
        }
    }
}
