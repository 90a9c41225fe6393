package org.pageio.itest.kit;

import static org.junit.Assert.assertEquals;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stream.ReadStream;

/**
 * A relation of valid pages whose block {@code b} carries the number {@code relNumber * 1000 + b}
 * at offset 64, written outside the pool and read back through the buffer manager's read stream.
 */
public final class NumberedRelation {

    private static final long NUMBER_OFFSET = 64;

    private NumberedRelation() {
    }

    /** Creates the relation with {@code blocks} checksummed pages in the default tablespace. */
    public static SmgrRelation create(BufferManager bufmgr, long relNumber, int blocks) throws IOException {
        SmgrRelation rel = bufmgr.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber));
        try (Arena a = Arena.ofConfined()) {
            MemorySegment page = a.allocate(8192, 4096);
            rel.create();
            for (int b = 0; b < blocks; b++) {
                Page.init(page, 0);
                page.set(ValueLayout.JAVA_LONG, NUMBER_OFFSET, relNumber * 1000 + b);
                Page.setChecksum(page, b);
                rel.write(b, page, 1);
            }
        }
        return rel;
    }

    /** Streams every block through a new session and checks each number and the stream's end. */
    public static void streamAndCheck(BufferManager bufmgr, SmgrRelation rel, int blocks) throws IOException {
        long relNumber = rel.locator().relNumber();
        try (BufferSession s = bufmgr.openSession("client");
                ReadStream stream = new ReadStream(s, rel, ReadStream.blockRange(0, blocks), 0, null)) {
            for (int b = 0; b < blocks; b++) {
                int buf = stream.next();
                assertEquals(relNumber * 1000 + b, s.page(buf).get(ValueLayout.JAVA_LONG, NUMBER_OFFSET));
                s.releaseBuffer(buf);
            }
            assertEquals(-1, stream.next());
        }
    }

    /**
     * Creates a relation of {@code blocks} numbered pages under a random number in
     * {@code [firstNumber, firstNumber + 100000)}, streams and checks it, and unlinks it.
     */
    public static void roundTrip(BufferManager bufmgr, long firstNumber, int blocks) throws IOException {
        SmgrRelation rel = create(bufmgr, firstNumber + java.util.concurrent.ThreadLocalRandom.current().nextInt(100000), blocks);
        try {
            streamAndCheck(bufmgr, rel, blocks);
        } finally {
            rel.unlink();
        }
    }
}
