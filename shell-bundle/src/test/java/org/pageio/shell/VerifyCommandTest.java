package org.pageio.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.shell.command.Commands;
import org.pageio.table.LoadProgress;
import org.pageio.table.TableShape;
import org.pageio.table.engine.TableEngine;

/**
 * {@code pageio:verify} typed into Gogo's real command processor over a real buffer manager: a
 * damaged table fails the command (so {@code ./pageio exec} exits 1), with the report printed first,
 * and it does so with {@code zero_damaged_pages} and {@code ignore_checksum_failure} on; a sound
 * table passes; {@code --pgdata} on a directory that is no cluster fails in pg_checksums' words.
 * (A real PostgreSQL cluster: pgdata-bundle's {@code PgChecksumsTest}.)
 */
class VerifyCommandTest {

    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();
    private final ByteArrayOutputStream printed = new ByteArrayOutputStream();
    private CommandProcessorImpl gogo;

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private TableEngine start(BufMgrSettings settings) throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        open.clear();
        BufferManagerCore bufmgr = BufferManagerCore.open(dir, settings, new SyncIoMethod());
        open.add(bufmgr);
        TableEngine engine = new TableEngine(bufmgr.pool());
        ThreadIOImpl threadIo = new ThreadIOImpl();
        threadIo.start();
        open.add(threadIo::stop);
        gogo = new CommandProcessorImpl(threadIo);
        open.add(gogo::stop);
        gogo.addCommand(Commands.PAGEIO, new VerifyCommand(engine, bufmgr), "verify");
        return engine;
    }

    private Object run(String line) throws Exception {
        PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        try (CommandSession s = gogo.createSession(InputStream.nullInputStream(), out, out)) {
            return s.execute(line);
        }
    }

    private static BufMgrSettings.Builder small() {
        return new BufMgrSettings.Builder().sharedBuffers(256).maxSessions(4);
    }

    @Test
    void aDamagedTableFailsTheCommandWhateverTheReadSettings() throws Exception {
        TableEngine engine = start(small().build());
        engine.load("t", TableShape.T, 2000, 1, LoadProgress.NONE);
        String ok = String.valueOf(run("pageio:verify t"));
        assertTrue(ok.startsWith("Checksum scan of t: ") && ok.contains("bad checksums or headers: 0"), ok);
        SmgrRelation heap = engine.heap(engine.table("t"));
        try (RandomAccessFile f = new RandomAccessFile(heap.segmentPath(5).toFile(), "rw")) {
            f.seek(heap.segmentOffset(5) + 3000);
            int b = f.read();
            f.seek(heap.segmentOffset(5) + 3000);
            f.write(b ^ 0x04);
        }
        for (BufMgrSettings s : List.of(small().build(), small().zeroDamagedPages(true).build(),
                small().ignoreChecksumFailure(true).build())) {
            start(s);
            printed.reset();
            Exception e = assertThrows(Exception.class, () -> run("pageio:verify t"));
            assertEquals("pageio:verify: t has 1 damaged block(s) (bad checksums or headers, listed above)", e.getMessage());
            String report = printed.toString(StandardCharsets.UTF_8);
            assertTrue(report.contains("bad checksums or headers: 1") && report.contains("invalid page in block 5"), report);
        }
    }

    @Test
    void pgdataOnADirectoryThatIsNoClusterFailsInPgChecksumsWords() throws Exception {
        start(small().build());
        Path empty = Files.createDirectory(dir.resolve("empty"));
        Exception e = assertThrows(Exception.class, () -> run("pageio:verify --pgdata " + empty));
        assertTrue(e.getMessage().startsWith("pg_checksums: error: could not open file \"" + empty.resolve("global/pg_control")
                + "\" for reading: No such file or directory"), e.getMessage());
        Exception both = assertThrows(Exception.class, () -> run("pageio:verify --pgdata " + empty + " t"));
        assertTrue(both.getMessage().startsWith("pageio:verify: --pgdata verifies a whole cluster"), both.getMessage());
        Exception jobs = assertThrows(Exception.class, () -> run("pageio:verify --jobs 65 --pgdata " + empty));
        assertEquals("pageio:verify: --jobs 65 is out of range: 1..64 files at once (0 or none: one per processor)", jobs.getMessage());
        // in range, the cluster is what fails
        Exception two = assertThrows(Exception.class, () -> run("pageio:verify --jobs 2 --pgdata " + empty));
        assertTrue(two.getMessage().startsWith("pg_checksums: error: could not open file"), two.getMessage());
    }
}
