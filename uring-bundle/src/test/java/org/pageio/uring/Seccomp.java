package org.pageio.uring;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pageio.posix.CallState;
import org.pageio.posix.Errno;
import org.pageio.posix.Posix;

/**
 * Blocks io_uring for real, for the calling thread only: a seccomp BPF filter that answers
 * {@code io_uring_setup} with EPERM, as Docker's default profile does. Seccomp filters belong to
 * one thread unless installed with TSYNC, and cannot be removed: call this on a dedicated thread
 * that ends after the test.
 */
public final class Seccomp {

    private static final boolean AARCH64 = "aarch64".equals(System.getProperty("os.arch"));
    private static final long SYS_PRCTL = AARCH64 ? 167 : 157;
    private static final long SYS_SECCOMP = AARCH64 ? 277 : 317;
    private static final int PR_SET_NO_NEW_PRIVS = 38;
    private static final int SECCOMP_SET_MODE_FILTER = 1;
    private static final int AUDIT_ARCH = AARCH64 ? 0xC00000B7 : 0xC000003E;
    private static final int SECCOMP_RET_ERRNO = 0x00050000;
    private static final int SECCOMP_RET_ALLOW = 0x7fff0000;
    // classic BPF opcodes
    private static final short LD_W_ABS = 0x20;
    private static final short JEQ_K = 0x15;
    private static final short RET_K = 0x06;

    private Seccomp() {
    }

    /** Installs the filter on this thread: io_uring_setup (425) fails with EPERM from now on. */
    public static void denyIoUringSetupOnThisThread() {
        try (Arena a = Arena.ofConfined()) {
            CallState cs = CallState.allocate(a);
            // Unprivileged seccomp needs no_new_privs (also per thread).
            long r = Posix.syscall(cs, SYS_PRCTL, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
            if (r != 0) {
                throw new IllegalStateException("prctl(PR_SET_NO_NEW_PRIVS) failed: " + Errno.name((int) -r));
            }
            // struct seccomp_data { int nr; __u32 arch; __u64 ip; __u64 args[6]; }
            MemorySegment filter = a.allocate(8L * 6, 8);
            insn(filter, 0, LD_W_ABS, 0, 0, 4);                              // A = arch
            insn(filter, 1, JEQ_K, 0, 3, AUDIT_ARCH);                        // other ABI: allow
            insn(filter, 2, LD_W_ABS, 0, 0, 0);                              // A = nr
            insn(filter, 3, JEQ_K, 0, 1, 425);                               // io_uring_setup?
            insn(filter, 4, RET_K, 0, 0, SECCOMP_RET_ERRNO | Errno.EPERM);   //   yes: EPERM
            insn(filter, 5, RET_K, 0, 0, SECCOMP_RET_ALLOW);                 //   no: allow
            // struct sock_fprog { unsigned short len; struct sock_filter *filter; }
            MemorySegment prog = a.allocate(16, 8);
            prog.set(JAVA_SHORT, 0, (short) 6);
            prog.set(JAVA_LONG, 8, filter.address());
            r = Posix.syscall(cs, SYS_SECCOMP, SECCOMP_SET_MODE_FILTER, 0, prog.address(), 0, 0, 0);
            if (r != 0) {
                throw new IllegalStateException("seccomp(SECCOMP_SET_MODE_FILTER) failed: " + Errno.name((int) -r));
            }
        }
    }

    /** struct sock_filter { __u16 code; __u8 jt; __u8 jf; __u32 k; } */
    private static void insn(MemorySegment f, int i, short code, int jt, int jf, int k) {
        long at = i * 8L;
        f.set(JAVA_SHORT, at, code);
        f.set(JAVA_BYTE, at + 2, (byte) jt);
        f.set(JAVA_BYTE, at + 3, (byte) jf);
        f.set(JAVA_INT, at + 4, k);
    }
}
