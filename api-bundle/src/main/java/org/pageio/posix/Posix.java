package org.pageio.posix;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * The libc calls pageio makes, through {@code java.lang.foreign}. All methods are static and
 * thread-safe. Each downcall handle is made once, the first time its call is made: it lives in a
 * holder class of its own, which the JVM initialises on first use (linking a downcall generates
 * code, a few milliseconds each; a command that makes five of these calls links five), and whose
 * {@code static final} field the JIT treats as a constant, as it did a field of this class.
 *
 * <h2>Raw calls</h2>
 * {@link #preadv}, {@link #pwritev}, {@link #pread}, {@link #pwrite}, {@link #fsync},
 * {@link #fdatasync} and {@link #syscall} are for hot paths: they return the call's result
 * ({@code >= 0}) or {@code -errno}, never allocate and never throw for an I/O error. The errno is
 * captured in the caller's {@link CallState}, which the calling thread owns. They return
 * {@code -EFAULT} without calling the kernel when a buffer segment is not native or is smaller
 * than the byte count. The entries of an iovec array are raw addresses: the caller keeps the
 * memory they point at alive. Only programming errors throw: a segment of a closed arena, or of
 * another thread's confined arena.
 *
 * <p>None is linked as {@link Linker.Option#critical critical}: these calls block on disks for
 * milliseconds or longer, and a critical call holds off every safepoint of the JVM meanwhile
 * (and could deadlock it when it waits for another Java thread, as {@code io_uring_enter} does).
 *
 * <h2>Convenience calls</h2>
 * The other calls throw {@link PosixException} naming the call, the file and the errno. They may
 * allocate.
 */
public final class Posix {
    private static final class Preadv {
        static final MethodHandle HANDLE = Libc.errnoFunction("preadv",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG));
    }

    private static final class Preadv2 {
        static final MethodHandle HANDLE = Libc.errnoFunction("preadv2",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_INT));
    }

    private static final class Pwritev {
        static final MethodHandle HANDLE = Libc.errnoFunction("pwritev",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG));
    }

    private static final class Pread {
        static final MethodHandle HANDLE = Libc.errnoFunction("pread",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG));
    }

    private static final class Pwrite {
        static final MethodHandle HANDLE = Libc.errnoFunction("pwrite",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG));
    }

    private static final class Fsync {
        static final MethodHandle HANDLE = Libc.errnoFunction("fsync",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    }

    private static final class Fdatasync {
        static final MethodHandle HANDLE = Libc.errnoFunction("fdatasync",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    }

    private static final class Syscall {
        static final MethodHandle HANDLE = Libc.errnoFunction("syscall",
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG),
                Linker.Option.firstVariadicArg(1));
    }

    private static final class Open {
        static final MethodHandle HANDLE = Libc.errnoFunction("open",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
                Linker.Option.firstVariadicArg(2));
    }

    private static final class Close {
        static final MethodHandle HANDLE = Libc.errnoFunction("close",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    }

    /** glibc 2.33 and later export {@code fstat}; before, only {@code __fxstat}. */
    private static final class Fstat {
        static final MethodHandle HANDLE = Libc.errnoFunction("fstat",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    }

    /** Returns the error number itself and leaves errno alone. */
    private static final class PosixFadvise {
        static final MethodHandle HANDLE = Libc.function("posix_fadvise",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
    }

    private static final class Fallocate {
        static final MethodHandle HANDLE = Libc.errnoFunction("fallocate",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
    }

    private static final class Ftruncate {
        static final MethodHandle HANDLE = Libc.errnoFunction("ftruncate",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));
    }

    private static final class Mmap {
        static final MethodHandle HANDLE = Libc.errnoFunction("mmap",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    }

    private static final class Munmap {
        static final MethodHandle HANDLE = Libc.errnoFunction("munmap",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    }

    private static final class Madvise {
        static final MethodHandle HANDLE = Libc.errnoFunction("madvise",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    }

    private static final class Mincore {
        static final MethodHandle HANDLE = Libc.errnoFunction("mincore",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS));
    }

    /** The GNU {@code strerror_r}: returns a pointer to the message, in the buffer or static. */
    private static final class StrerrorR {
        static final MethodHandle HANDLE = Libc.function("strerror_r",
                FunctionDescriptor.of(ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG));
    }
    private static final long STRERROR_BUFFER = 256;

    private static final long PAGE_SIZE = pageSizeOfThisMachine();

    private Posix() { }

    // ---- raw hot-path calls ----

    /** {@code preadv(2)}: reads into the {@code iovcnt} buffers of {@code iov} from {@code offset}; bytes read or -errno. */
    public static long preadv(CallState cs, int fd, MemorySegment iov, int iovcnt, long offset) {
        if (!covers(iov, iovcnt * Iovec.BYTES)) {
            return -Errno.EFAULT;
        }
        try {
            return result((long) Preadv.HANDLE.invokeExact(cs.segment(), fd, iov, iovcnt, offset), cs);
        } catch (Throwable t) {
            throw Libc.unchecked(t);
        }
    }

    /**
     * Linux's {@code RWF_NOWAIT} for {@link #preadv2}: read only what needs no waiting (data in the
     * page cache), else fail with {@code EAGAIN} (since 1.4.0).
     */
    public static final int RWF_NOWAIT = 0x00000008;

    /**
     * {@code preadv2(2)}: {@link #preadv} with per-call {@code flags} such as {@link #RWF_NOWAIT};
     * bytes read (with {@code RWF_NOWAIT} possibly fewer than asked: the part in the page cache) or
     * -errno (since 1.4.0).
     */
    public static long preadv2(CallState cs, int fd, MemorySegment iov, int iovcnt, long offset, int flags) {
        if (!covers(iov, iovcnt * Iovec.BYTES)) {
            return -Errno.EFAULT;
        }
        try {
            return result((long) Preadv2.HANDLE.invokeExact(cs.segment(), fd, iov, iovcnt, offset, flags), cs);
        } catch (Throwable t) {
            throw Libc.unchecked(t);
        }
    }

    /** {@code pwritev(2)}: writes the {@code iovcnt} buffers of {@code iov} at {@code offset}; bytes written or -errno. */
    public static long pwritev(CallState cs, int fd, MemorySegment iov, int iovcnt, long offset) {
        if (!covers(iov, iovcnt * Iovec.BYTES)) {
            return -Errno.EFAULT;
        }
        try {
            return result((long) Pwritev.HANDLE.invokeExact(cs.segment(), fd, iov, iovcnt, offset), cs);
        } catch (Throwable t) {
            throw Libc.unchecked(t);
        }
    }

    /** {@code pread(2)}: reads up to {@code count} bytes into {@code buf}; bytes read (0 at end of file) or -errno. */
    public static long pread(CallState cs, int fd, MemorySegment buf, long count, long offset) {
        if (!covers(buf, count)) {
            return -Errno.EFAULT;
        }
        try {
            return result((long) Pread.HANDLE.invokeExact(cs.segment(), fd, buf, count, offset), cs);
        } catch (Throwable t) {
            throw Libc.unchecked(t);
        }
    }

    /** {@code pwrite(2)}: writes {@code count} bytes of {@code buf} at {@code offset}; bytes written or -errno. */
    public static long pwrite(CallState cs, int fd, MemorySegment buf, long count, long offset) {
        if (!covers(buf, count)) {
            return -Errno.EFAULT;
        }
        try {
            return result((long) Pwrite.HANDLE.invokeExact(cs.segment(), fd, buf, count, offset), cs);
        } catch (Throwable t) {
            throw Libc.unchecked(t);
        }
    }

    /** {@code fsync(2)}: 0 or -errno. */
    public static int fsync(CallState cs, int fd) {
        try {
            return (int) result((int) Fsync.HANDLE.invokeExact(cs.segment(), fd), cs);
        } catch (Throwable t) {
            throw Libc.unchecked(t);
        }
    }

    /** {@code fdatasync(2)}: 0 or -errno. */
    public static int fdatasync(CallState cs, int fd) {
        try {
            return (int) result((int) Fdatasync.HANDLE.invokeExact(cs.segment(), fd), cs);
        } catch (Throwable t) {
            throw Libc.unchecked(t);
        }
    }

    /**
     * {@code syscall(2)}: system call {@code number} with six arguments (extra ones are ignored by
     * the kernel). Returns the result, or -errno when libc returns -1. Numbers differ between
     * architectures (e.g. {@code getpid} is 39 on x86_64, 172 on aarch64).
     */
    public static long syscall(CallState cs, long number, long a1, long a2, long a3, long a4, long a5, long a6) {
        try {
            return result((long) Syscall.HANDLE.invokeExact(cs.segment(), number, a1, a2, a3, a4, a5, a6), cs);
        } catch (Throwable t) {
            throw Libc.unchecked(t);
        }
    }

    // ---- convenience calls ----

    /**
     * {@code open(2)} with {@link OpenFlags#O_CLOEXEC} always added.
     *
     * @return the file descriptor
     */
    public static int open(Path path, int flags, int mode) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cPath = arena.allocateFrom(path.toString());
            return (int) orThrow("open", path, null,
                    s -> (int) Open.HANDLE.invokeExact(s, cPath, flags | OpenFlags.O_CLOEXEC, mode));
        }
    }

    /** {@code close(2)}. The descriptor is released even when this throws; never retry. */
    public static void close(int fd, Path pathForMessages) throws PosixException {
        orThrow("close", pathForMessages, null, s -> (int) Close.HANDLE.invokeExact(s, fd));
    }

    /** {@code fstat(2)}; needs glibc 2.33 or later. */
    public static Stat fstat(int fd, Path pathForMessages) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(StructStat.CURRENT.byteSize, Long.BYTES);
            orThrow("fstat", pathForMessages, null, s -> (int) Fstat.HANDLE.invokeExact(s, fd, buf));
            return StructStat.CURRENT.read(buf);
        }
    }

    /** {@code fsync(2)}, throwing on failure. */
    public static void fsyncOrThrow(int fd, Path p) throws PosixException {
        orThrow("fsync", p, null, s -> (int) Fsync.HANDLE.invokeExact(s, fd));
    }

    /** {@code fdatasync(2)}, throwing on failure. */
    public static void fdatasyncOrThrow(int fd, Path p) throws PosixException {
        orThrow("fdatasync", p, null, s -> (int) Fdatasync.HANDLE.invokeExact(s, fd));
    }

    /** {@code posix_fadvise(2)} with one of the {@link Fadvise} values; {@code len} 0 means to the end of the file. */
    public static void fadvise(int fd, long offset, long len, int advice, Path p) throws PosixException {
        int error;
        try {
            error = (int) PosixFadvise.HANDLE.invokeExact(fd, offset, len, advice);
        } catch (Throwable t) {
            throw Libc.unchecked(t);
        }
        if (error != 0) {
            throw new PosixException("posix_fadvise", p, error, range(offset, len) + ", advice " + advice);
        }
    }

    /**
     * {@code fallocate(2)} with {@link Fallocate} mode flags. File systems that cannot do it throw
     * with {@link Errno#EOPNOTSUPP}.
     */
    public static void fallocate(int fd, int mode, long offset, long len, Path p) throws PosixException {
        orThrow("fallocate", p, "mode " + mode + ", " + range(offset, len),
                s -> (int) Fallocate.HANDLE.invokeExact(s, fd, mode, offset, len));
    }

    /** {@code ftruncate(2)}: sets the file's size to {@code length}. */
    public static void ftruncate(int fd, long length, Path p) throws PosixException {
        orThrow("ftruncate", p, "length " + length, s -> (int) Ftruncate.HANDLE.invokeExact(s, fd, length));
    }

    /**
     * {@code mmap(2)} at an address the kernel picks, with {@link Mman} values. The segment is
     * {@code length} bytes long and not tied to any arena: it stays valid until
     * {@link #munmap}, and touching it afterwards crashes the JVM.
     */
    @SuppressWarnings("restricted") // the mapping is length bytes long
    public static MemorySegment mmap(long length, int prot, int flags, int fd, long offset, Path p)
            throws PosixException {
        long address = orThrow("mmap", p, range(offset, length),
                s -> ((MemorySegment) Mmap.HANDLE.invokeExact(s, MemorySegment.NULL, length, prot, flags, fd, offset)).address());
        return MemorySegment.ofAddress(address).reinterpret(length);
    }

    /** {@code munmap(2)} of all of {@code seg}, as {@link #mmap} returned it. */
    public static void munmap(MemorySegment seg) throws PosixException {
        orThrow("munmap", null, "address 0x" + Long.toHexString(seg.address()) + ", length " + seg.byteSize(),
                s -> (int) Munmap.HANDLE.invokeExact(s, seg, seg.byteSize()));
    }

    /**
     * {@code madvise(2)} of all of {@code seg} (page-aligned) with an {@link Mman} {@code MADV_}
     * value; {@code what} names the memory in the exception's message.
     */
    public static void madvise(MemorySegment seg, int advice, String what) throws PosixException {
        orThrow("madvise", null, adviceName(advice) + " of " + what + " (address 0x" + Long.toHexString(seg.address())
                + ", length " + seg.byteSize() + ")", s -> (int) Madvise.HANDLE.invokeExact(s, seg, seg.byteSize(), advice));
    }

    private static String adviceName(int advice) {
        return switch (advice) {
            case Mman.MADV_HUGEPAGE -> "MADV_HUGEPAGE";
            case Mman.MADV_NOHUGEPAGE -> "MADV_NOHUGEPAGE";
            case Mman.MADV_POPULATE_WRITE -> "MADV_POPULATE_WRITE";
            default -> "advice " + advice;
        };
    }

    /**
     * Residency of {@code [offset, offset + length)} of an open file in the page cache: maps the
     * pages it touches {@code PROT_READ}/{@code MAP_SHARED} (which reads nothing), asks
     * {@code mincore(2)}, unmaps. Pages past the end of the file count as not resident.
     */
    public static Residency residency(int fd, long offset, long length, Path p) throws PosixException {
        if (offset < 0 || length < 0) {
            throw new IllegalArgumentException("negative " + range(offset, length));
        }
        if (length == 0) {
            return new Residency(0, 0);
        }
        long start = offset - offset % PAGE_SIZE;
        long mapLength = offset + length - start;
        long pages = (mapLength + PAGE_SIZE - 1) / PAGE_SIZE;
        MemorySegment map = mmap(mapLength, Mman.PROT_READ, Mman.MAP_SHARED, fd, start, p);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment vector = arena.allocate(pages);
            orThrow("mincore", p, range(offset, length), s -> (int) Mincore.HANDLE.invokeExact(s, map, mapLength, vector));
            long resident = 0;
            for (long i = 0; i < pages; i++) {
                resident += vector.get(JAVA_BYTE, i) & 1;
            }
            return new Residency(resident, pages);
        } finally {
            munmap(map);
        }
    }

    /** The size of a memory page, in bytes (usually 4096). */
    public static long pageSize() {
        return PAGE_SIZE;
    }

    /** The C library's message for {@code errno}, e.g. {@code "No such file or directory"}; thread-safe. */
    @SuppressWarnings("restricted") // only read up to the terminating NUL
    public static String strerror(int errno) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(STRERROR_BUFFER);
            MemorySegment message = (MemorySegment) StrerrorR.HANDLE.invokeExact(errno, buf, STRERROR_BUFFER);
            return message.reinterpret(Integer.MAX_VALUE).getString(0);
        } catch (Throwable t) {
            throw Libc.unchecked(t);
        }
    }

    // ---- helpers ----

    /** A downcall that sets errno and returns -1 on failure; its argument is the capture segment. */
    @FunctionalInterface
    private interface ErrnoCall {
        long invoke(MemorySegment callState) throws Throwable;
    }

    /** Makes {@code c} with a fresh {@link CallState}; returns its result or throws when it returns -1. */
    private static long orThrow(String call, Path file, String context, ErrnoCall c) throws PosixException {
        long result;
        int errno;
        try (Arena arena = Arena.ofConfined()) {
            CallState cs = CallState.allocate(arena);
            result = c.invoke(cs.segment());
            errno = cs.errno();
        } catch (Throwable t) {
            throw Libc.unchecked(t);
        }
        if (result == -1) {
            throw new PosixException(call, file, errno, context);
        }
        return result;
    }

    private static long result(long r, CallState cs) {
        return r == -1 ? -cs.errno() : r;
    }

    /** Whether the kernel may use bytes {@code [0, count)} of {@code seg}. */
    private static boolean covers(MemorySegment seg, long count) {
        return seg.isNative() && count >= 0 && count <= seg.byteSize();
    }

    private static String range(long offset, long length) {
        return "offset " + offset + ", length " + length;
    }

    private static long pageSizeOfThisMachine() {
        try {
            return (int) Libc.function("getpagesize", FunctionDescriptor.of(JAVA_INT)).invokeExact();
        } catch (Throwable t) {
            throw Libc.unchecked(t);
        }
    }
}
