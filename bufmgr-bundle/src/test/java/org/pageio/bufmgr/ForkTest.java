package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.pageio.api.AioException;
import org.pageio.bufmgr.smgr.ForkNumber;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.method.sync.SyncIoMethod;

/**
 * Relation forks in the storage manager: a fork is an {@link SmgrRelation} of its own (its own id,
 * so its buffers are told apart from the main fork's), its files are named as PostgreSQL names
 * them, its messages say {@code fork vm}, its I/O counts under object {@code relation}, and the
 * main fork stands for the relation when buffers are dropped and files unlinked.
 */
class ForkTest extends PoolTestBase {

    private static RelFileLocator loc(long relNumber) {
        return new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber);
    }

    @Test
    void aForkIsARelationOfItsOwnWithPostgresFileNames() throws Exception {
        try (StorageManager sm = new StorageManager(dir.resolve("d"), 2, false)) {
            SmgrRelation main = sm.open(loc(16384));
            SmgrRelation vm = main.fork(ForkNumber.VISIBILITYMAP_FORKNUM);
            assertSame(vm, sm.open(loc(16384), ForkNumber.VISIBILITYMAP_FORKNUM), "opened once");
            assertSame(main, vm.fork(ForkNumber.MAIN_FORKNUM));
            assertSame(main, main.fork(ForkNumber.MAIN_FORKNUM));
            assertNotEquals(main.id(), vm.id());
            assertSame(vm, sm.relation(vm.id()));
            assertEquals(ForkNumber.VISIBILITYMAP_FORKNUM, vm.forkNumber());
            assertEquals(2, vm.forkNumber().number());
            assertEquals(1, ForkNumber.FSM_FORKNUM.number());
            assertEquals(0, ForkNumber.MAIN_FORKNUM.number());
            Path base = sm.dataDirectory().resolve("base");
            assertEquals(base.resolve("16384"), main.segmentPath(0));
            assertEquals(base.resolve("16384_vm"), vm.segmentPath(0));
            assertEquals(base.resolve("16384_vm.1"), vm.segmentPath(2));
            assertEquals(base.resolve("16384_fsm"), main.fork(ForkNumber.FSM_FORKNUM).segmentPath(0));
            assertEquals("pg_default/16384", main.toString());
            assertEquals("pg_default/16384 fork vm", vm.toString());
            assertTrue(vm.describe(SmgrRelation.targetData(3, 1))
                    .matches("block 3 of relation pg_default/16384 fork vm \\(file .*/base/16384_vm.1\\)"),
                    vm.describe(SmgrRelation.targetData(3, 1)));
            assertTrue(main.describe(SmgrRelation.targetData(3, 1)).startsWith("block 3 of relation pg_default/16384 fork main"));
            assertEquals(java.util.List.of(main, main.fork(ForkNumber.FSM_FORKNUM), vm), main.openForks());
            assertEquals(java.util.List.of(vm), vm.openForks());
        }
    }

    @Test
    void forkPagesHaveBuffersOfTheirOwnAndCountUnderRelation() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation main = relation(16500, 4);
        SmgrRelation vm = main.fork(ForkNumber.VISIBILITYMAP_FORKNUM);
        TestPages.fill(vm, 3);
        assertTrue(Files.exists(dir.resolve("base").resolve("16500_vm")));
        long before = relationReads();
        try (BufferSession s = pool.openSession("client")) {
            for (long b = 0; b < 3; b++) {
                int m = s.readBuffer(main, b, null);
                int v = s.readBuffer(vm, b, null);
                assertNotEquals(m, v, "block " + b + " of the two forks in two buffers");
                assertNull(TestPages.check(16500, b, s.page(m)));
                assertNull(TestPages.check(16500, b, s.page(v)));
                s.releaseBuffer(m);
                s.releaseBuffer(v);
            }
            assertEquals(before + 6, relationReads(), "reads of both forks count under object relation");
            // a change of a fork page is written by the checkpoint, under object relation too
            int v = s.readBuffer(vm, 1, null);
            s.beginModify(v);
            s.page(v).set(java.lang.foreign.ValueLayout.JAVA_BYTE, 100, (byte) 0x5A);
            s.endModify(v, true);
            s.releaseBuffer(v);
        }
        long writes = relationWrites();
        pool.checkpoint();
        assertEquals(writes + 1, relationWrites(), "the fork's dirty page is written under object relation");
        try (RandomAccessFile f = new RandomAccessFile(vm.segmentPath(1).toFile(), "r")) {
            f.seek(vm.segmentOffset(1) + 100);
            assertEquals(0x5A, f.read());
        }
    }

    @Test
    void droppingAndUnlinkingTheMainForkTakesEveryFork() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation main = relation(16600, 2);
        SmgrRelation vm = main.fork(ForkNumber.VISIBILITYMAP_FORKNUM);
        TestPages.fill(vm, 2);
        try (BufferSession s = pool.openSession("client")) {
            for (long b = 0; b < 2; b++) {
                s.releaseBuffer(s.readBuffer(main, b, null));
                int v = s.readBuffer(vm, b, null);
                s.beginModify(v);
                s.endModify(v, true); // dirty: dropped, never written
                s.releaseBuffer(v);
            }
            assertEquals(4, s.dropRelationBuffers(main), "both forks' buffers");
        }
        assertEquals(0, pool.checkpoint().buffersWritten(), "nothing of the dropped forks is written");
        main.unlink();
        assertFalse(Files.exists(main.segmentPath(0)));
        assertFalse(Files.exists(vm.segmentPath(0)));
    }

    /** A fork an earlier run wrote, not opened in this one, goes with its relation too. */
    @Test
    void unlinkFindsAForkNotOpenedInThisRun() throws Exception {
        Path data = dir.resolve("d");
        try (StorageManager sm = new StorageManager(data, StorageManager.DEFAULT_SEGMENT_BLOCKS, false)) {
            SmgrRelation main = sm.open(loc(16700));
            TestPages.fill(main, 1);
            TestPages.fill(main.fork(ForkNumber.VISIBILITYMAP_FORKNUM), 1);
        }
        try (StorageManager sm = new StorageManager(data, StorageManager.DEFAULT_SEGMENT_BLOCKS, false)) {
            SmgrRelation main = sm.open(loc(16700));
            assertTrue(Files.exists(data.resolve("base/16700_vm")));
            main.unlink();
            assertFalse(Files.exists(data.resolve("base/16700")));
            assertFalse(Files.exists(data.resolve("base/16700_vm")));
        }
    }

    @Test
    void aDamagedForkPageIsNamedWithItsFork() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation main = relation(16800, 1);
        SmgrRelation vm = main.fork(ForkNumber.VISIBILITYMAP_FORKNUM);
        TestPages.fill(vm, 3);
        try (RandomAccessFile f = new RandomAccessFile(vm.segmentPath(2).toFile(), "rw")) {
            f.seek(vm.segmentOffset(2) + 4000);
            int b = f.read();
            f.seek(vm.segmentOffset(2) + 4000);
            f.write(b ^ 0x01);
        }
        try (BufferSession s = pool.openSession("client")) {
            AioException e = assertThrows(AioException.class, () -> s.readBuffer(vm, 2, null));
            assertTrue(e.getMessage().matches("invalid page in block 2 of relation pg_default/16800 fork vm \\(file .*/16800_vm\\):"
                    + " page checksum mismatch; .*"), e.getMessage());
            assertEquals(1, e.getMessage().lines().count());
        }
    }

    private long relationReads() {
        return sum(StatIo.Column.READS);
    }

    private long relationWrites() {
        return sum(StatIo.Column.WRITES);
    }

    private long sum(StatIo.Column c) {
        long n = 0;
        for (StatIo.Row r : pool.stats().rows()) {
            if (r.object() == StatIo.IoObject.RELATION) {
                n += r.value(c);
            }
        }
        return n;
    }
}
