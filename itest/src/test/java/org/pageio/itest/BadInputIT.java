package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.composite;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import javax.inject.Inject;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.Test;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.util.Filter;
import org.pageio.api.AioConfig;
import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.api.IoResult;
import org.pageio.api.IoReturn;
import org.pageio.api.IoSession;
import org.pageio.api.IoTarget;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.method.fault.FaultPlan;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;
import org.pageio.tck.FaultRig;
import org.pageio.tck.PatternRelation;

/**
 * Bad input everywhere: damaged relation files, names that try to leave the data directory, a
 * method that does not exist, a data directory that cannot be created or that others can write, a file system refusing
 * O_DIRECT. Each must end in one line naming the object and the way out, and nothing else is
 * lost (the rest of the relation still reads). The messages are printed ("BadInputIT: input ->
 * message") for fault-bundle/README.md's table.
 */
public class BadInputIT extends PageioTestBase {

    @Inject @Filter("(io.method=sync)") private IoMethod sync;
    @Inject @Filter("(io.method=direct)") private IoMethod direct;
    @Inject private CommandProcessor commands;

    static final Map<String, String> MESSAGES = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    protected Option extraOptions() {
        return composite(reactorBundle("uring-bundle"), reactorBundle("directio-bundle"),
                reactorBundle("org.osgi.service.log"), reactorBundle("org.apache.felix.metatype"));
    }

    static String record(String input, Throwable e) {
        String m = e.getMessage();
        MESSAGES.put(input, m);
        System.out.println("BadInputIT: " + input + " -> " + m);
        assertEquals("one line for " + input + ": " + m, 1, m.lines().count());
        return m;
    }

    private FaultRig rig(long segmentBlocks) throws Exception {
        return new FaultRig(sync, FaultPlan.none(), FaultRig.small().segmentBlocks(segmentBlocks).build());
    }

    /** Overwrites {@code len} bytes at {@code offset} of a segment file with what {@code edit} makes of them. */
    private static void edit(Path file, long offset, int len, java.util.function.UnaryOperator<byte[]> edit) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            byte[] b = new byte[len];
            f.seek(offset);
            f.readFully(b);
            f.seek(offset);
            f.write(edit.apply(b));
        }
    }

    private static void readsFine(BufferSession s, SmgrRelation rel, long block) throws Exception {
        int buf = s.readBuffer(rel, block, null);
        assertEquals(0, PatternRelation.wrongBytes(rel.locator().relNumber(), block, s.page(buf)));
        s.releaseBuffer(buf);
    }

    @Test
    public void aFlippedBitIsAChecksumMismatchNamingRelationAndBlock() throws Exception {
        try (FaultRig rig = rig(StorageManager.DEFAULT_SEGMENT_BLOCKS)) {
            SmgrRelation rel = rig.relation(65000, 8);
            edit(rel.segmentPath(3), 3L * 8192 + 4000, 1, b -> new byte[] {(byte) (b[0] ^ 0x10)});
            try (BufferSession s = rig.pool.openSession("client")) {
                String m = record("a flipped bit in block 3", assertThrows(Exception.class, () -> s.readBuffer(rel, 3, null)));
                assertTrue(m, m.contains("page checksum mismatch") && m.contains("block 3") && m.contains("pg_default/65000"));
                assertThrows(Exception.class, () -> s.readBuffer(rel, 3, null)); // never VALID: fails again
                readsFine(s, rel, 2);
                readsFine(s, rel, 4);
            }
            rig.assertNothingLeaked();
        }
    }

    @Test
    public void aZeroedHeaderIsAnInvalidPageAndAnAllZeroPageIsANewPage() throws Exception {
        try (FaultRig rig = rig(StorageManager.DEFAULT_SEGMENT_BLOCKS)) {
            SmgrRelation rel = rig.relation(65001, 8);
            edit(rel.segmentPath(2), 2L * 8192, 24, b -> new byte[24]);
            edit(rel.segmentPath(5), 5L * 8192, 8192, b -> new byte[8192]);
            try (BufferSession s = rig.pool.openSession("client")) {
                String m = record("a page whose header was zeroed (block 2)",
                        assertThrows(Exception.class, () -> s.readBuffer(rel, 2, null)));
                assertTrue(m, m.contains("invalid page") && m.contains("block 2") && m.contains("pg_default/65001"));
                int buf = s.readBuffer(rel, 5, null); // PostgreSQL's rule: an all-zero page is a new, empty page
                assertEquals(-1L, s.page(buf).mismatch(MemorySegment.ofArray(new byte[8192])));
                s.releaseBuffer(buf);
                System.out.println("BadInputIT: a page zeroed entirely (block 5) -> no error: an all-zero page is a new,"
                        + " empty page, as in PostgreSQL");
                readsFine(s, rel, 6);
            }
            rig.assertNothingLeaked();
        }
    }

    @Test
    public void aTruncatedSegmentIsAShortReadNamingTheBlock() throws Exception {
        try (FaultRig rig = rig(StorageManager.DEFAULT_SEGMENT_BLOCKS)) {
            SmgrRelation rel = rig.relation(65002, 8);
            try (RandomAccessFile f = new RandomAccessFile(rel.segmentPath(0).toFile(), "rw")) {
                f.setLength(5L * 8192 + 4096); // block 5 cut in half, 6 and 7 gone
            }
            try (BufferSession s = rig.pool.openSession("client")) {
                String m = record("a segment file truncated in the middle of block 5",
                        assertThrows(Exception.class, () -> s.readBuffer(rel, 5, null)));
                assertTrue(m, m.contains("block 5") && m.contains("pg_default/65002"));
                String past = record("a read of block 7, past the truncated end",
                        assertThrows(Exception.class, () -> s.readBuffer(rel, 7, null)));
                assertTrue(past, past.contains("block 7") && past.contains("pg_default/65002"));
                readsFine(s, rel, 4);
            }
            rig.assertNothingLeaked();
        }
    }

    @Test
    public void aMissingSegmentFileIsNamed() throws Exception {
        try (FaultRig rig = rig(10)) {
            SmgrRelation rel = rig.relation(65003, 30);
            Path second = rel.segmentPath(15);
            Files.delete(second);
            rel.close(); // drop the descriptors the writes left open: the next read opens the segment again
            try (BufferSession s = rig.pool.openSession("client")) {
                String m = record("segment file 1 of a relation deleted, block 15 read",
                        assertThrows(Exception.class, () -> s.readBuffer(rel, 15, null)));
                assertTrue(m, m.contains(second.getFileName().toString()));
                readsFine(s, rel, 5);
                readsFine(s, rel, 25);
            }
            rig.assertNothingLeaked();
        }
    }

    @Test
    public void namesThatTryToLeaveTheDataDirectoryAreRefused() throws Exception {
        try (FaultRig rig = rig(StorageManager.DEFAULT_SEGMENT_BLOCKS)) {
            String m = record("tablespace name ../../etc", assertThrows(IllegalArgumentException.class,
                    () -> rig.smgr.createTablespace("../../etc", null, -1, -1)));
            assertTrue(m, m.contains("../../etc") && m.contains("use 1 to 63 of a-z, 0-9 and _"));
        }
        for (String cmd : new String[] {"pageio:load --rows 10 --shape t ../../etc/passwd", "pageio:scan count /tmp/t"}) {
            String m = record(cmd, assertThrows(Exception.class, () -> run(cmd)));
            assertTrue(m, m.contains("invalid table name") || m.contains("does not exist"));
        }
    }

    @Test
    public void aMethodThatDoesNotExistIsRefusedNamingTheRegisteredOnes() throws Exception {
        String m = record("pageio:set io_method no_such_method",
                assertThrows(Exception.class, () -> run("pageio:set io_method no_such_method")));
        assertTrue(m, m.contains("no_such_method") && m.contains("registered methods are") && m.contains("stays"));
        String r = record("pageio:set effective_io_concurrency 5000",
                assertThrows(Exception.class, () -> run("pageio:set effective_io_concurrency 5000")));
        assertTrue(r, r.contains("effective_io_concurrency") && r.contains("1000"));
    }

    @Test
    public void aDataDirectoryThatCannotBeCreatedIsNamedWithTheFix() throws Exception {
        Path file = Files.createTempFile("pageio-not-a-directory", "");
        try {
            Path data = file.resolve("data");
            String m = record("a data directory under a regular file",
                    assertThrows(RuntimeException.class, () -> new StorageManager(data, 1024, false)));
            assertTrue(m, m.contains(data.toString()) && m.contains("pageio.data"));
        } finally {
            Files.delete(file);
        }
    }

    @Test
    public void aDataDirectoryOthersCanWriteIsRefusedNamingItAndChmod() throws Exception {
        Path data = Files.createTempDirectory("pageio-open-data");
        try {
            Files.setPosixFilePermissions(data, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
            String m = record("a data directory others can write (0777)",
                    assertThrows(IllegalStateException.class, () -> new StorageManager(data, 1024, false)));
            assertTrue(m, m.startsWith("data directory \"" + data + "\" has invalid permissions (rwxrwxrwx)"));
            assertTrue(m, m.endsWith("run chmod 700 " + data));
            assertTrue("nothing created in it", !Files.exists(data.resolve("base")));
        } finally {
            Files.delete(data);
        }
    }

    @Test
    public void aFileSystemThatRefusesODirectIsNamedWithTheWayOut() throws Exception {
        // procfs has no direct I/O (on this kernel tmpfs accepts O_DIRECT): the refusal must name
        // the file, the file system and the way out
        Path proc = Path.of("/proc/self/stat");
        int fd = Posix.open(proc, OpenFlags.O_RDONLY, 0);
        try (AioContext ctx = AioContext.create(direct, new AioConfig(2, 4, 4)); Arena a = Arena.ofConfined();
                IoSession s = ctx.openSession("client")) {
            IoReturn ret = new IoReturn();
            IoHandle h = s.acquire();
            long gen = h.generation();
            h.setIovec(0, a.allocate(8192, 4096)).setReturn(ret).setTarget(IoTarget.file(proc), 0).startReadv(fd, 1, 0);
            s.await(h, gen);
            assertEquals(IoResult.ERROR, ret.status());
            String m = record("io_method=direct on a file system without O_DIRECT (/proc)", new Exception(ret.message()));
            assertTrue(m, m.contains("O_DIRECT refused for /proc/") && m.contains("use io_method=io_uring"));
        } finally {
            Posix.close(fd, proc);
        }
    }

    private String run(String command) throws Exception {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        try (CommandSession session = commands.createSession(InputStream.nullInputStream(), out, out)) {
            return String.valueOf(session.execute(command));
        }
    }
}
