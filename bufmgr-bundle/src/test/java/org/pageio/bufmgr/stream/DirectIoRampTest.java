package org.pageio.bufmgr.stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link DirectIoRamp}: applies to streams whose reads bypass the page cache; a sequential one
 * starts full, and every read that needed I/O grows the distance. The ramp-up it gives a whole
 * scan is pinned by {@code ReadStreamDirectRampTest}.
 */
class DirectIoRampTest {

    @Test
    void appliesOnlyToDirectIo() {
        assertNull(DirectIoRamp.forStream(false, true), "buffered: the kernel's read-ahead stands behind the stream");
        assertNotNull(DirectIoRamp.forStream(true, false));
    }

    @Test
    void aSequentialDirectStreamStartsFullARandomOneRampsUp() {
        assertTrue(DirectIoRamp.forStream(true, true).startsFull());
        assertFalse(DirectIoRamp.forStream(true, false).startsFull());
    }

    @Test
    void everyReadThatNeededIoGrowsTheDistance() {
        assertTrue(DirectIoRamp.forStream(true, false).growsOnEveryRead());
        assertTrue(DirectIoRamp.forStream(true, true).growsOnEveryRead());
    }
}
