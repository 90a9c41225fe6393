package org.pageio.method.posixaio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/**
 * {@link Aiocb}'s offsets against real calls: glibc must read the descriptor, buffer, length and
 * offset where this method writes them, and store the error and the result where it reads them,
 * in agreement with {@code aio_error} and {@code aio_return}.
 */
@Timeout(30)
class AiocbLayoutTest {

    @TempDir
    Path dir;

    @Test
    void glibcReadsAndWritesTheFieldsAtTheOffsetsWrittenDown() throws IOException {
        assertTrue(Aio.AVAILABILITY.available(), Aio.AVAILABILITY.cause());
        byte[] content = new byte[3 * 4096];
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) (i / 4096 * 31 + i % 251);
        }
        Path file = Files.write(dir.resolve("layout"), content);
        int fd = Posix.open(file, OpenFlags.O_RDONLY, 0);
        try (Arena arena = Arena.ofConfined()) {
            CallState cs = CallState.allocate(arena);
            MemorySegment pool = arena.allocate(2 * Aiocb.SIZE, Aiocb.ALIGNMENT);
            Aiocb.initPool(pool, 2);
            MemorySegment buf = arena.allocate(4096 + 100);
            // block 0: 4096 + 100 bytes from offset 8192 + 16, of which 4096 - 16 exist (a short read)
            Aiocb.define(pool, 0, fd, Aiocb.LIO_READ, buf.address(), 4096 + 100, 8192 + 16);
            assertEquals(Aiocb.NOT_QUEUED, Aio.error(pool.address()), "aio_error reads the field at ERROR_CODE");
            assertEquals(0, Aio.read(cs, pool.address()));
            await(cs, arena, pool.address());
            assertEquals(0, Aio.error(pool.address()));
            assertEquals(0, pool.get(ValueLayout.JAVA_INT, Aiocb.ERROR_CODE), "glibc's __error_code at 112");
            assertEquals(4096 - 16, pool.get(ValueLayout.JAVA_LONG, Aiocb.RETURN_VALUE), "glibc's __return_value at 120");
            assertEquals(4096 - 16, Aio.returnValue(pool.address()));
            for (int i = 0; i < 4096 - 16; i++) {
                assertEquals(content[8192 + 16 + i], buf.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " read from offset " + (8192 + 16 + i));
            }
            // block 1: a read of a closed descriptor fails in glibc's thread with EBADF
            Posix.close(fd, file);
            long cb1 = pool.address() + Aiocb.SIZE;
            Aiocb.define(pool, 1, fd, Aiocb.LIO_READ, buf.address(), 4096, 0);
            assertEquals(0, Aio.read(cs, cb1));
            await(cs, arena, cb1);
            assertEquals(Errno.EBADF, Aio.error(cb1));
            assertEquals(Errno.EBADF, pool.get(ValueLayout.JAVA_INT, Aiocb.SIZE + Aiocb.ERROR_CODE));
            assertEquals(-1L, Aio.returnValue(cb1));
            assertEquals(Aiocb.SIGEV_NONE, pool.get(ValueLayout.JAVA_INT, Aiocb.SIZE + Aiocb.SIGEV_NOTIFY),
                    "the sigevent is left as the pool made it");
        }
    }

    private static void await(CallState cs, Arena arena, long cb) {
        MemorySegment list = arena.allocate(8);
        list.set(ValueLayout.JAVA_LONG, 0, cb);
        MemorySegment timeout = arena.allocate(16);
        timeout.set(ValueLayout.JAVA_LONG, 0, 1);
        while (Aio.error(cb) == Aiocb.EINPROGRESS) {
            Aio.suspend(cs, list.address(), 1, timeout.address());
        }
    }
}
