package org.pageio.posix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

class IovecTest {

    @Test
    void setAndReadFields() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment iov = Iovec.allocate(arena, 3);
            assertEquals(3 * Iovec.BYTES, iov.byteSize());
            assertEquals(Iovec.BYTES, Iovec.LAYOUT.byteSize());
            MemorySegment buf = arena.allocate(100);
            Iovec.set(iov, 2, buf);
            Iovec.set(iov, 0, 4096, 8192);
            assertEquals(buf.address(), Iovec.base(iov, 2));
            assertEquals(100, Iovec.length(iov, 2));
            assertEquals(4096, Iovec.base(iov, 0));
            assertEquals(8192, Iovec.length(iov, 0));
            assertEquals(0, Iovec.length(iov, 1));
            assertThrows(IllegalArgumentException.class,
                    () -> Iovec.set(iov, 1, MemorySegment.ofArray(new byte[4])));
        }
    }
}
