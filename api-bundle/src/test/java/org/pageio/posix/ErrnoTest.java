package org.pageio.posix;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import org.junit.jupiter.api.Test;

class ErrnoTest {

    @Test
    void namesAndMessages() {
        assertEquals("EBADF", Errno.name(9));
        assertEquals("EHWPOISON", Errno.name(133));
        assertEquals("errno 999", Errno.name(999));
        assertEquals("errno 0", Errno.name(0));
        assertEquals("errno -1", Errno.name(-1));
        assertEquals("errno 41", Errno.name(41));
        assertEquals("EAGAIN", Errno.name(Errno.EWOULDBLOCK));
        assertEquals("EOPNOTSUPP", Errno.name(Errno.ENOTSUP));
        assertEquals("No such file or directory", Errno.message(Errno.ENOENT));
    }

    /** Every name agrees with glibc's own table ({@code strerrorname_np}, glibc 2.32+). */
    @Test
    @SuppressWarnings("restricted")
    void namesAgreeWithGlibc() throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle strerrorname = linker.downcallHandle(linker.defaultLookup().find("strerrorname_np").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        for (int errno = 1; errno <= 133; errno++) {
            MemorySegment name = (MemorySegment) strerrorname.invokeExact(errno);
            String expected = name.equals(MemorySegment.NULL) ? "errno " + errno : name.reinterpret(64).getString(0);
            assertEquals(expected, Errno.name(errno));
        }
    }
}
