package org.pageio.tck;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.pageio.api.AioContext;
import org.pageio.api.AioHandleInfo;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.method.fault.FaultInjectingMethod;
import org.pageio.method.fault.FaultPlan;

/**
 * A real buffer manager (storage manager, AIO context, buffer pool) over a fault-injecting
 * decorator around a real method, in a data directory of its own. {@link #close} checks that
 * nothing leaked: no pinned buffer, no open session, no handle in flight.
 */
public final class FaultRig implements AutoCloseable {

    public final Path dir;
    public final FaultInjectingMethod method;
    public final BufferManagerCore bufmgr;
    public final StorageManager smgr;
    public final AioContext aio;
    public final BufferPool pool;

    public FaultRig(IoMethod delegate, FaultPlan plan, BufMgrSettings settings) throws IOException {
        dir = Files.createTempDirectory("pageio-fault-" + delegate.name() + "-");
        method = new FaultInjectingMethod(delegate, plan, 42);
        bufmgr = BufferManagerCore.open(dir, settings, method);
        bufmgr.storage().setDirectIo(method.bypassesPageCache()); // as the component opens files for the method
        smgr = bufmgr.storage();
        aio = bufmgr.aio();
        pool = bufmgr.pool();
    }

    public static BufMgrSettings.Builder small() {
        return new BufMgrSettings.Builder().sharedBuffers(256).maxSessions(8);
    }

    /** A new relation of {@code blocks} pattern pages ({@link PatternRelation}). */
    public SmgrRelation relation(long relNumber, long blocks) throws IOException {
        SmgrRelation rel = smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber));
        PatternRelation.fill(rel, blocks);
        return rel;
    }

    public long total(StatIo.Column c) {
        return pool.stats().total(c);
    }

    /** Asserts that no buffer is pinned, no session open and no handle in flight. */
    public void assertNothingLeaked() {
        assertEquals(method.delegate().name() + ": pinned buffers after the sessions closed", 0, pool.pinnedBuffers());
        assertTrue(method.delegate().name() + ": open sessions " + aio.openSessions(), aio.openSessions().isEmpty());
        List<AioHandleInfo> busy = aio.snapshot();
        assertTrue(method.delegate().name() + ": handles not idle " + busy, busy.isEmpty());
    }

    @Override
    public void close() throws IOException {
        try {
            bufmgr.close();
            method.close();
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
