package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.UncheckedIOException;
import org.junit.jupiter.api.Test;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.method.sync.SyncIoMethod;

/**
 * A block callback that fails (an index scan's callback whose index page cannot be read) ends the
 * stream with the failure and leaves no pin behind: not the look-ahead's, and not the buffer that
 * {@code next} had taken off the queue for the consumer when the look-ahead after it failed.
 */
class ReadStreamCallbackFailureTest extends PoolTestBase {

    @Test
    void aFailingCallbackLeavesNoPinBehind() throws Exception {
        pool(new SyncIoMethod(), small().build());
        SmgrRelation rel = relation(16395, 40);
        for (int failAt = 1; failAt < 12; failAt++) {
            int at = failAt;
            try (BufferSession s = pool.openSession("client")) {
                ReadStream.BlockCallback cb = new ReadStream.BlockCallback() {
                    int handed;

                    @Override
                    public long nextBlock(ReadStream stream) {
                        if (handed == at) {
                            throw new UncheckedIOException(new java.io.IOException("index page unreadable"));
                        }
                        return (handed++ * 3L) % 40; // jumps: one read per block
                    }
                };
                try (ReadStream stream = new ReadStream(s, rel, cb, ReadStream.USE_BATCHING, null)) {
                    assertThrows(UncheckedIOException.class, () -> {
                        for (int buf; (buf = stream.next()) >= 0; ) {
                            s.releaseBuffer(buf);
                        }
                    });
                }
                assertEquals(0, pool.pinnedBuffers(), "pins left after a callback failing at block " + at);
            }
        }
    }
}
