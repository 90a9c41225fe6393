package org.pageio.method.posixaio;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * glibc's {@code struct aiocb} on a 64-bit Linux (x86-64; aarch64 has the same LP64 layout), as
 * {@code <aio.h>} declares it with 64-bit {@code off_t}: the offsets below are what this method
 * writes and reads, and {@code AiocbLayoutTest} checks them against a real {@code aio_read} and a
 * failing one (the result and the error glibc stores must appear at {@link #ERROR_CODE} and
 * {@link #RETURN_VALUE}, and {@code aio_error}/{@code aio_return} must agree).
 *
 * <pre>
 *   offset size  field
 *        0    4  int aio_fildes
 *        4    4  int aio_lio_opcode          LIO_READ 0, LIO_WRITE 1, LIO_NOP 2
 *        8    4  int aio_reqprio             0: the process's priority
 *       16    8  volatile void *aio_buf
 *       24    8  size_t aio_nbytes
 *       32   64  struct sigevent aio_sigevent: sigev_value 32, sigev_signo 40, sigev_notify 44
 *       96    8  struct aiocb *__next_prio    glibc's: its request queue
 *      104    4  int __abs_prio              glibc's
 *      108    4  int __policy                glibc's
 *      112    4  int __error_code            glibc's: EINPROGRESS, then 0 or the errno (aio_error)
 *      120    8  ssize_t __return_value      glibc's: the result (aio_return)
 *      128    8  off64_t aio_offset
 *      136   32  char __glibc_reserved[32]
 *      168       sizeof (struct aiocb), alignment 8
 * </pre>
 *
 * <p>Control blocks are only ever written by the owner of the session that holds them, while
 * glibc does not hold them (before submission, or after {@code aio_error} said the request is
 * over); {@link #ERROR_CODE} is the one glibc field this method writes, and only then, with
 * {@link #NOT_QUEUED} (see {@link AioSession}). The sigevent is written once, when the pool is
 * created ({@code SIGEV_NONE}), and never again: glibc's thread still reads it after it stored
 * the result ({@code __aio_notify}). Static helpers; no state.
 */
final class Aiocb {

    static final long FILDES = 0;
    static final long LIO_OPCODE = 4;
    static final long REQPRIO = 8;
    static final long BUF = 16;
    static final long NBYTES = 24;
    static final long SIGEVENT = 32;
    static final long SIGEV_NOTIFY = SIGEVENT + 12;
    static final long ERROR_CODE = 112;
    static final long RETURN_VALUE = 120;
    static final long OFFSET = 128;
    /** {@code sizeof (struct aiocb)}. */
    static final long SIZE = 168;
    static final long ALIGNMENT = 8;

    static final int LIO_READ = 0;
    static final int LIO_WRITE = 1;
    static final int LIO_NOP = 2;
    /** {@code lio_listio} mode: return once the requests are queued. */
    static final int LIO_NOWAIT = 1;
    /** {@code sigev_notify}: no notification; completion is learnt by asking ({@code aio_error}, {@code aio_suspend}). */
    static final int SIGEV_NONE = 1;
    /** {@code aio_fsync} operations: {@code O_SYNC} (fsync) and {@code O_DSYNC} (fdatasync). */
    static final int O_SYNC = 0x101000;
    static final int O_DSYNC = 0x1000;
    /** {@code EINPROGRESS} (Linux): {@code aio_error} of a request that is not over. */
    static final int EINPROGRESS = 115;
    /**
     * What the owner stores in {@link #ERROR_CODE} before it hands a block to glibc: glibc stores
     * {@code EINPROGRESS} there when it queues the request, so a block that still says
     * {@code NOT_QUEUED} after a failed {@code lio_listio} was not queued. No errno is negative.
     */
    static final int NOT_QUEUED = -1;

    private Aiocb() {
    }

    /** Control block {@code i} of {@code pool}. */
    static MemorySegment at(MemorySegment pool, long i) {
        return pool.asSlice(i * SIZE, SIZE);
    }

    /** Defines a read or write of {@code nbytes} at {@code address} from file offset {@code offset}; marks it not queued. */
    static void define(MemorySegment pool, long cb, int fd, int opcode, long address, long nbytes, long offset) {
        long base = cb * SIZE;
        pool.set(ValueLayout.JAVA_INT, base + FILDES, fd);
        pool.set(ValueLayout.JAVA_INT, base + LIO_OPCODE, opcode);
        pool.set(ValueLayout.JAVA_INT, base + REQPRIO, 0);
        pool.set(ValueLayout.JAVA_LONG, base + BUF, address);
        pool.set(ValueLayout.JAVA_LONG, base + NBYTES, nbytes);
        pool.set(ValueLayout.JAVA_LONG, base + OFFSET, offset);
        pool.set(ValueLayout.JAVA_INT, base + ERROR_CODE, NOT_QUEUED);
        pool.set(ValueLayout.JAVA_LONG, base + RETURN_VALUE, 0L);
    }

    /** Sets every block's sigevent to {@code SIGEV_NONE}; once, on a zeroed pool of {@code count} blocks. */
    static void initPool(MemorySegment pool, long count) {
        for (long i = 0; i < count; i++) {
            pool.set(ValueLayout.JAVA_INT, i * SIZE + SIGEV_NOTIFY, SIGEV_NONE);
        }
    }

    /** The bytes block {@code cb} asked for. */
    static long nbytes(MemorySegment pool, long cb) {
        return pool.get(ValueLayout.JAVA_LONG, cb * SIZE + NBYTES);
    }

    /** glibc's error field as it is now (plain read; {@code aio_error} is the call that reads it for a decision). */
    static int errorField(MemorySegment pool, long cb) {
        return pool.get(ValueLayout.JAVA_INT, cb * SIZE + ERROR_CODE);
    }

    /** Marks a block that glibc refused to queue as over, with {@code errno}: the reaper reads it like any result. */
    static void refused(MemorySegment pool, long cb, int errno) {
        pool.set(ValueLayout.JAVA_LONG, cb * SIZE + RETURN_VALUE, -1L);
        pool.set(ValueLayout.JAVA_INT, cb * SIZE + ERROR_CODE, errno);
    }
}
