package org.pageio.bufmgr;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.pageio.bufmgr.stream.ReadStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.api.AioContext;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo.Column;

/** A buffer pool over a temporary data directory, torn down after each test. */
abstract class PoolTestBase {

    @TempDir
    Path dir;

    final List<AutoCloseable> closeLast = new ArrayList<>();
    BufferManagerCore core;
    StorageManager smgr;
    AioContext aio;
    BufferPool pool;

    @AfterEach
    void tearDown() throws Exception {
        if (core != null) {
            core.close();
        }
        for (AutoCloseable c : closeLast) {
            c.close();
        }
    }

    BufferPool pool(IoMethod method, BufMgrSettings settings) {
        core = BufferManagerCore.open(dir, settings, method);
        smgr = core.storage();
        aio = core.aio();
        pool = core.pool();
        return pool;
    }

    /** A fault-injecting decorator of {@code delegate}, closed after the test. */
    org.pageio.method.fault.FaultInjectingMethod faults(IoMethod delegate, org.pageio.method.fault.FaultPlan.Rule... rules) {
        org.pageio.method.fault.FaultInjectingMethod m = new org.pageio.method.fault.FaultInjectingMethod(delegate,
                org.pageio.method.fault.FaultPlan.of(rules), 42);
        closeLast.add(m);
        return m;
    }

    static BufMgrSettings.Builder small() {
        return new BufMgrSettings.Builder().sharedBuffers(512).maxSessions(8);
    }

    SmgrRelation relation(long relNumber, long blocks) throws IOException {
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber));
        TestPages.fill(rel, blocks);
        return rel;
    }

    long totalReadBlocks() {
        return total(Column.READ_BYTES) / TestPages.BLCKSZ;
    }

    long total(Column c) {
        return pool.stats().total(c);
    }

    void scan(SmgrRelation rel, long relNumber, long first, long count) {
        try (BufferSession s = pool.openSession("client");
                ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(first, count), 0, null)) {
            for (long b = first; b < first + count; b++) {
                int buf = stream.next();
                String wrong = TestPages.check(relNumber, b, s.page(buf));
                s.releaseBuffer(buf);
                if (wrong != null) {
                    throw new AssertionError(wrong);
                }
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    void randomReads(SmgrRelation rel, long relNumber, int seed, int count) {
        Random rnd = new Random(seed);
        try (BufferSession s = pool.openSession("client")) {
            int nblocks = (int) rel.nblocks();
            for (int i = 0; i < count; i++) {
                long b = rnd.nextInt(nblocks);
                int buf = s.readBuffer(rel, b, null);
                String wrong = TestPages.check(relNumber, b, s.page(buf));
                s.releaseBuffer(buf);
                if (wrong != null) {
                    throw new AssertionError(wrong);
                }
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

}
