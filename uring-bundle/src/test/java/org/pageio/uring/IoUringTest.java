package org.pageio.uring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pageio.api.AioConfig;
import org.pageio.api.AioContext;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.posix.Errno;

/** The ring itself: geometry, the probe, and the messages of every failure a person can fix. */
@Timeout(60)
class IoUringTest {

    /** A method that is never asked to do I/O: only the context's handle table is needed. */
    static final IoMethod NONE = new IoMethod() {
        public String name() {
            return "none";
        }

        public int submit(IoHandle[] handles, int count) {
            throw new AssertionError();
        }
    };

    @Test
    void probeFindsIoUringOnThisMachine() {
        IoUringProbe p = IoUring.probe();
        assertTrue(p.available(), p.cause());
        assertNull(p.cause());
        assertEquals(0, p.errno());
        assertTrue(p.availability().available());
        assertTrue((p.features() & Abi.IORING_FEAT_NODROP) != 0, "this kernel drops no completion");
    }

    @Test
    void ringHasTheEntriesAskedForRoundedUpAndTwiceAsManyCqes() {
        try (AioContext ctx = AioContext.create(NONE, new AioConfig(2, 16, 4))) {
            try (IoUring r = IoUring.open(ctx, 16)) {
                assertEquals(16, r.sqEntries());
                assertEquals(32, r.cqEntries());
                assertTrue(r.singleMmap(), "kernels since 5.4 offer one mapping for both rings: " + r);
                assertEquals(0, r.cqOverflow());
                assertEquals("none", r.waitErrors());
                assertTrue(r.fd() >= 0);
            }
            try (IoUring r = IoUring.open(ctx, 100)) {
                assertEquals(128, r.sqEntries());
                assertEquals(256, r.cqEntries());
            }
        }
    }

    @Test
    void closeIsIdempotentAndAClosedRingAnswersWithoutTouchingItsMemory() {
        try (AioContext ctx = AioContext.create(NONE, new AioConfig(1, 4, 4))) {
            IoUring r = IoUring.open(ctx, 4);
            int fd = r.fd();
            assertTrue(IoUring.isRingFd(fd));
            r.close();
            assertFalse(IoUring.isRingFd(fd), "forgotten before the number can be reused");
            r.close();
            assertEquals(-1, r.cqOverflow());
            assertEquals(0, r.poll());
        }
    }

    @Test
    void badArgumentsAreRefused() {
        try (AioContext ctx = AioContext.create(NONE, new AioConfig(1, 4, 4))) {
            assertThrows(IllegalArgumentException.class, () -> IoUring.open(ctx, 0));
            assertThrows(IllegalArgumentException.class, () -> IoUring.open(ctx, IoUring.MAX_ENTRIES + 1));
        }
        assertThrows(NullPointerException.class, () -> IoUring.open(null, 4));
    }

    /** The acceptance test: io_uring blocked for real by a seccomp filter, as Docker's default profile does. */
    @Test
    void probeUnderASeccompFilterNamesEpermSeccompAndTheSysctl() throws Exception {
        AtomicReference<Object> result = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                Seccomp.denyIoUringSetupOnThisThread();
                result.set(IoUring.probe());
            } catch (Throwable e) {
                result.set(e);
            }
        }, "seccomp-probe");
        t.start();
        t.join(30_000);
        if (result.get() instanceof Throwable e) {
            throw new AssertionError("the seccomp thread failed", e);
        }
        IoUringProbe p = (IoUringProbe) result.get();
        assertFalse(p.available());
        assertEquals(Errno.EPERM, p.errno());
        String c = p.cause();
        assertTrue(c.startsWith("io_uring_setup(8 entries) failed: EPERM (Operation not permitted)"), c);
        assertTrue(c.contains("seccomp"), c);
        assertTrue(c.contains("Seccomp: 2"), "the thread's seccomp state is read from /proc: " + c);
        assertTrue(c.contains("kernel.io_uring_disabled"), c);
        String sysctl = Diagnosis.read(Diagnosis.IO_URING_DISABLED);
        if (sysctl != null) {
            assertTrue(c.contains("kernel.io_uring_disabled = " + sysctl), "the sysctl's value is named: " + c);
        }
        assertTrue(c.contains("io_method=worker"), c);
        // The other threads are not filtered.
        assertTrue(IoUring.probe().available());
    }

    // ------------------------------------------------------------------ messages, from given system states

    private static Diagnosis.Env env(String disabled, String seccomp) {
        return new Diagnosis.Env(disabled, "1000", seccomp, "2".equals(seccomp) ? "1" : "0", "6.18.0",
                "8388608 bytes", "1024 files");
    }

    @Test
    void epermWithTheSysctlAtTwoNamesTheSysctlAndTheCommand() {
        String h = Diagnosis.setupHint(Errno.EPERM, env("2", "0"));
        assertTrue(h.contains("kernel.io_uring_disabled = 2"), h);
        assertTrue(h.contains("sysctl -w kernel.io_uring_disabled=0"), h);
        assertTrue(h.contains("seccomp"), h);
    }

    @Test
    void epermWithTheSysctlAtOneNamesTheGroup() {
        String h = Diagnosis.setupHint(Errno.EPERM, env("1", "0"));
        assertTrue(h.contains("kernel.io_uring_disabled = 1"), h);
        assertTrue(h.contains("kernel.io_uring_group (gid 1000)"), h);
    }

    @Test
    void epermWithTheSysctlAtZeroBlamesSeccomp() {
        String h = Diagnosis.setupHint(Errno.EPERM, env("0", "2"));
        assertTrue(h.contains("kernel.io_uring_disabled = 0"), h);
        assertTrue(h.contains("not the cause"), h);
        assertTrue(h.contains("seccomp filter (Seccomp: 2, Seccomp_filters: 1"), h);
        assertTrue(h.contains("Docker"), h);
        String older = Diagnosis.setupHint(Errno.EPERM, env(null, "2"));
        assertTrue(older.contains("is not readable (it exists from Linux 6.6 on)"), older);
    }

    @Test
    void otherErrnosNameTheirLimits() {
        String enosys = Diagnosis.setupHint(Errno.ENOSYS, env("0", "0"));
        assertTrue(enosys.contains("Linux 5.6") && enosys.contains("6.18.0"), enosys);
        String enomem = Diagnosis.setupHint(Errno.ENOMEM, env("0", "0"));
        assertTrue(enomem.contains("RLIMIT_MEMLOCK") && enomem.contains("8388608 bytes") && enomem.contains("ulimit -l"),
                enomem);
        String emfile = Diagnosis.setupHint(Errno.EMFILE, env("0", "0"));
        assertTrue(emfile.contains("1024 files") && emfile.contains("ulimit -n"), emfile);
        String msg = Diagnosis.failure("io_uring_setup(64 entries)", Errno.EMFILE, emfile);
        assertTrue(msg.startsWith("io_uring_setup(64 entries) failed: EMFILE (Too many open files): "), msg);
    }

    @Test
    void procParsing() {
        String status = "Name:\tx\nSeccomp:\t2\nSeccomp_filters:\t3\n";
        assertEquals("2", Diagnosis.field(status, "Seccomp:"));
        assertEquals("3", Diagnosis.field(status, "Seccomp_filters:"));
        String limits = "Limit                     Soft Limit           Hard Limit           Units     \n"
                + "Max open files            20000                20000                files     \n"
                + "Max locked memory         unlimited            unlimited            bytes     \n";
        assertEquals("20000 files", Diagnosis.limit(limits, "Max open files"));
        assertEquals("unlimited", Diagnosis.limit(limits, "Max locked memory"));
        Diagnosis.Env now = Diagnosis.Env.current();
        assertTrue(now.seccomp() != null && now.kernel() != null, "read from /proc: " + now);
    }
}
