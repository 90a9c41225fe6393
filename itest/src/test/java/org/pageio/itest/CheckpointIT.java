package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.util.concurrent.ThreadLocalRandom;
import javax.inject.Inject;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.Test;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.PageVerifier;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.itest.kit.NumberedRelation;

/**
 * Writes in Felix: pages modified through the buffer manager service reach the files, with
 * their checksums, when {@code pageio:checkpoint} says so; stat_io shows the checkpointer's writes
 * and fsyncs.
 */
public class CheckpointIT extends PageioTestBase {

    @Inject
    private BufferManager bufmgr;

    @Inject
    private CommandProcessor commands;

    @Test
    public void checkpointCommandWritesModifiedPagesAndFsyncs() throws Exception {
        long relNumber = 300000 + ThreadLocalRandom.current().nextInt(100000);
        int blocks = 40;
        SmgrRelation rel = NumberedRelation.create(bufmgr, relNumber, blocks);
        try {
            try (BufferSession s = bufmgr.openSession("client")) {
                for (int b = 0; b < blocks; b++) {
                    int buf = s.readBuffer(rel, b, null);
                    s.beginModify(buf);
                    s.page(buf).set(ValueLayout.JAVA_LONG, 128, -b - 1);
                    s.endModify(buf, true);
                    s.releaseBuffer(buf);
                }
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (CommandSession session = commands.createSession(InputStream.nullInputStream(), out, out)) {
                String line = String.valueOf(session.execute("pageio:checkpoint"));
                assertTrue(line, line.startsWith("checkpoint complete: wrote " + blocks + " buffers"));
                assertTrue(line, line.contains(" 1 files synced"));
                String stats = String.valueOf(session.execute("pageio:stat_io --format json"));
                assertTrue(stats, stats.contains("\"backend_type\": \"checkpointer\""));
                String again = String.valueOf(session.execute("pageio:checkpoint"));
                assertTrue(again, again.startsWith("checkpoint complete: wrote 0 buffers"));
            }
            byte[] file = Files.readAllBytes(rel.segmentPath(0));
            for (int b = 0; b < blocks; b++) {
                MemorySegment page = Arena.ofAuto().allocate(8192, 4096);
                page.copyFrom(MemorySegment.ofArray(file).asSlice(b * 8192L, 8192));
                assertEquals("block " + b, PageVerifier.VALID, PageVerifier.verify(page, b, true));
                assertEquals(relNumber * 1000 + b, page.get(ValueLayout.JAVA_LONG_UNALIGNED, 64));
                assertEquals(-b - 1, page.get(ValueLayout.JAVA_LONG_UNALIGNED, 128));
            }
        } finally {
            rel.unlink();
        }
    }
}
