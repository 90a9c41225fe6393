package org.pageio.posix;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class PosixExceptionTest {

    @Test
    void messageWithContextAndWithoutFile() {
        PosixException e = new PosixException("pread", Path.of("/x/y"), Errno.EIO, "offset 8192, length 4096");
        assertEquals("pread(/x/y) failed: EIO (Input/output error), offset 8192, length 4096", e.getMessage());
        assertEquals("offset 8192, length 4096", e.context());
        assertEquals("munmap() failed: EINVAL (Invalid argument)",
                new PosixException("munmap", null, Errno.EINVAL, null).getMessage());
    }
}
