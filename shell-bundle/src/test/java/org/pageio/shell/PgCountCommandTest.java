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
import java.util.List;
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
import org.pageio.pgdata.PostgresServer;
import org.pageio.shell.command.Commands;

/**
 * {@code pageio:pgcount} typed into Gogo's real command processor over a real buffer manager, on a
 * cluster the installed PostgreSQL's {@code initdb} writes (pgdata-bundle's tests' {@code PostgresServer};
 * missing PostgreSQL fails the test): {@code pg_database} ({@code global/1262}) holds
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
        try (PostgresServer pg = new PostgresServer()) {
            pg.initdb();
            Path data = pg.data;
            String out = String.valueOf(run("pageio:pgcount --pgdata " + data + " global/1262"));
            assertTrue(out.startsWith("count: 3\nall_visible: "), out);
            assertTrue(out.matches("(?s).*\nblocks: 1 \\(\\d with PD_ALL_VISIBLE\\), tuples: \\d+, decided by pg_xact: \\d+"), out);
            Exception notHeap = assertThrows(Exception.class, () -> run("pageio:pgcount --pgdata " + data + " base/x/1"));
            assertTrue(notHeap.getMessage().startsWith("pageio:pgcount: \"base/x/1\" is not a relation's path"), notHeap.getMessage());
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
}
