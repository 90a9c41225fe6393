package org.pageio.method.posixaio;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.pageio.api.IoMethod.Availability;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;

/**
 * The POSIX asynchronous I/O functions of the C library, through {@code java.lang.foreign}:
 * {@code aio_read}, {@code aio_write}, {@code aio_fsync}, {@code lio_listio}, {@code aio_error},
 * {@code aio_return}, {@code aio_suspend}, and glibc's {@code aio_init}. Downcall handles are built
 * once, at class initialisation; the calls never allocate and never throw for an I/O error (the
 * result is returned, errno lands in the caller's {@link CallState}), as {@code org.pageio.posix}'s
 * raw calls. None is linked {@code critical}: {@code aio_suspend} blocks, and the others take
 * glibc's request lock.
 *
 * <p>The functions are looked up in the process (glibc 2.34 and later have them in libc), then in
 * {@code librt.so.1} (where glibc before 2.34 keeps them). When one is missing, or the C library is
 * not glibc (the control block's layout, {@link Aiocb}, is glibc's), {@link #AVAILABILITY} says
 * which and why, and no call is made. All static functions are thread-safe.
 */
final class Aio {

    /** The functions this method calls, in the order {@link #AVAILABILITY} names missing ones. */
    static final List<String> FUNCTIONS = List.of("aio_read", "aio_write", "aio_fsync", "lio_listio", "aio_error",
            "aio_return", "aio_suspend", "aio_init");

    /** A pointer argument, passed as its address. */
    private static final ValueLayout.OfLong POINTER = JAVA_LONG;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    /** Whether every function was found in a glibc on a 64-bit Linux, or why not. */
    static final Availability AVAILABILITY;

    private static final MethodHandle AIO_READ;
    private static final MethodHandle AIO_WRITE;
    private static final MethodHandle AIO_FSYNC;
    private static final MethodHandle LIO_LISTIO;
    private static final MethodHandle AIO_ERROR;
    private static final MethodHandle AIO_RETURN;
    private static final MethodHandle AIO_SUSPEND;
    private static final MethodHandle AIO_INIT;

    static {
        SymbolLookup lookup = lookup();
        List<String> missing = new ArrayList<>();
        MemorySegment[] symbols = new MemorySegment[FUNCTIONS.size()];
        for (int i = 0; i < symbols.length; i++) {
            Optional<MemorySegment> s = lookup.find(FUNCTIONS.get(i));
            if (s.isPresent()) {
                symbols[i] = s.get();
            } else {
                missing.add(FUNCTIONS.get(i));
            }
        }
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        Availability a;
        if (!os.startsWith("linux") || !(arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64"))) {
            a = Availability.unavailable("io_method=posix_aio knows glibc's struct aiocb on 64-bit Linux (x86-64,"
                    + " aarch64), not " + System.getProperty("os.name") + " on " + arch + "; use io_method=worker");
        } else if (!missing.isEmpty()) {
            a = Availability.unavailable("this C library does not export " + String.join(", ", missing)
                    + ": io_method=posix_aio needs POSIX asynchronous I/O (glibc has it in libc from 2.34,"
                    + " in librt.so.1 before); use io_method=worker");
        } else if (lookup.find("gnu_get_libc_version").isEmpty()) {
            a = Availability.unavailable("the C library is not glibc (no gnu_get_libc_version): io_method=posix_aio"
                    + " lays out struct aiocb as glibc does; use io_method=worker");
        } else {
            a = Availability.AVAILABLE;
        }
        AVAILABILITY = a;
        boolean ok = a.available();
        // Pointers are passed as their addresses (POINTER, a long): the LP64 calling conventions pass
        // both alike, and no MemorySegment is made per call.
        AIO_READ = ok ? errnoHandle(symbols[0], FunctionDescriptor.of(JAVA_INT, POINTER)) : null;
        AIO_WRITE = ok ? errnoHandle(symbols[1], FunctionDescriptor.of(JAVA_INT, POINTER)) : null;
        AIO_FSYNC = ok ? errnoHandle(symbols[2], FunctionDescriptor.of(JAVA_INT, JAVA_INT, POINTER)) : null;
        LIO_LISTIO = ok ? errnoHandle(symbols[3], FunctionDescriptor.of(JAVA_INT, JAVA_INT, POINTER, JAVA_INT, POINTER)) : null;
        AIO_ERROR = ok ? handle(symbols[4], FunctionDescriptor.of(JAVA_INT, POINTER)) : null;
        AIO_RETURN = ok ? handle(symbols[5], FunctionDescriptor.of(JAVA_LONG, POINTER)) : null;
        AIO_SUSPEND = ok ? errnoHandle(symbols[6], FunctionDescriptor.of(JAVA_INT, POINTER, JAVA_INT, POINTER)) : null;
        AIO_INIT = ok ? handle(symbols[7], FunctionDescriptor.ofVoid(ADDRESS)) : null;
    }

    private Aio() {
    }

    private static SymbolLookup lookup() {
        SymbolLookup libc = LINKER.defaultLookup();
        if (libc.find("aio_read").isPresent()) {
            return libc;
        }
        try {
            return libc.or(SymbolLookup.libraryLookup("librt.so.1", Arena.global()));
        } catch (IllegalArgumentException | IllegalCallerException e) {
            return libc; // no librt: AVAILABILITY names the missing functions
        }
    }

    @SuppressWarnings("restricted") // the descriptors match <aio.h>'s prototypes
    private static MethodHandle handle(MemorySegment symbol, FunctionDescriptor d) {
        return LINKER.downcallHandle(symbol, d);
    }

    @SuppressWarnings("restricted")
    private static MethodHandle errnoHandle(MemorySegment symbol, FunctionDescriptor d) {
        return LINKER.downcallHandle(symbol, d, CAPTURE_ERRNO);
    }

    private static void requireAvailable() {
        if (!AVAILABILITY.available()) {
            throw new UnsupportedOperationException(AVAILABILITY.cause());
        }
    }

    private static RuntimeException unchecked(Throwable t) {
        if (t instanceof RuntimeException e) {
            return e;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new AssertionError("a downcall threw a checked exception", t);
    }

    /** {@code aio_read(cb)}: 0 when queued, else {@code -errno}. */
    static int read(CallState cs, long cb) {
        try {
            return result((int) AIO_READ.invokeExact(cs.segment(), cb), cs);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@code aio_write(cb)}: 0 when queued, else {@code -errno}. */
    static int write(CallState cs, long cb) {
        try {
            return result((int) AIO_WRITE.invokeExact(cs.segment(), cb), cs);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@code aio_fsync(O_SYNC or O_DSYNC, cb)} for {@code cb}'s descriptor: 0 when queued, else {@code -errno}. */
    static int fsync(CallState cs, boolean dataOnly, long cb) {
        try {
            return result((int) AIO_FSYNC.invokeExact(cs.segment(), dataOnly ? Aiocb.O_DSYNC : Aiocb.O_SYNC, cb), cs);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /**
     * {@code lio_listio(LIO_NOWAIT, list, nent, NULL)}: queues {@code nent} requests in one call and
     * returns; 0 when all were queued, else {@code -errno} (some may have been: see
     * {@link Aiocb#NOT_QUEUED}).
     */
    static int listio(CallState cs, long list, int nent) {
        try {
            return result((int) LIO_LISTIO.invokeExact(cs.segment(), Aiocb.LIO_NOWAIT, list, nent, 0L), cs);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@code aio_error(cb)}: {@link Aiocb#EINPROGRESS}, 0, or the errno of the request. */
    static int error(long cb) {
        try {
            return (int) AIO_ERROR.invokeExact(cb);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@code aio_return(cb)}: the request's result, bytes or -1; once per request, after it is over. */
    static long returnValue(long cb) {
        try {
            return (long) AIO_RETURN.invokeExact(cb);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /**
     * {@code aio_suspend(list, nent, timeout)}: 0 once one of the requests is over (at once if one
     * already is), else {@code -EAGAIN} (timeout) or {@code -EINTR}.
     */
    static int suspend(CallState cs, long list, int nent, long timeout) {
        try {
            return result((int) AIO_SUSPEND.invokeExact(cs.segment(), list, nent, timeout), cs);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /**
     * glibc's {@code aio_init}: sizes its request pool ({@code aio_threads}, {@code aio_num}) if
     * the process queued no request yet, and sets {@code aio_idle_time} in any case.
     * {@code struct aioinit} is eight ints: threads at 0, num at 4, idle time at 24.
     */
    static void init(PosixAioSettings s) {
        requireAvailable();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment init = a.allocate(32, 4);
            init.set(JAVA_INT, 0, s.threads());
            init.set(JAVA_INT, 4, s.num());
            init.set(JAVA_INT, 24, s.idleTime());
            AIO_INIT.invokeExact(init);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    private static int result(int r, CallState cs) {
        if (r != -1) {
            return r;
        }
        int errno = cs.errno();
        return errno > 0 ? -errno : -Errno.EIO;
    }
}
