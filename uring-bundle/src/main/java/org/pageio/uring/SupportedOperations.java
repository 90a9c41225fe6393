package org.pageio.uring;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.pageio.uring.Abi.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.pageio.posix.CallState;
import org.pageio.posix.Posix;

/**
 * Asks a ring which operations its kernel supports ({@code IORING_REGISTER_PROBE}) and checks
 * those pageio submits: READV, WRITEV, FSYNC, READ, WRITE. For the availability probe only;
 * allocates freely. Any thread.
 */
final class SupportedOperations {

    private static final byte[] OPS = {IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC, IORING_OP_READ, IORING_OP_WRITE};
    private static final String[] NAMES = {"IORING_OP_READV", "IORING_OP_WRITEV", "IORING_OP_FSYNC", "IORING_OP_READ",
            "IORING_OP_WRITE"};

    private SupportedOperations() {
    }

    /** {@code null} when the kernel of ring {@code ringFd} supports every opcode pageio submits, else the message. */
    static String missing(int ringFd) {
        try (Arena a = Arena.ofConfined()) {
            CallState cs = CallState.allocate(a);
            MemorySegment probe = a.allocate(PROBE_HEADER_BYTES + PROBE_OPS * PROBE_OP_BYTES, 8);
            long r = Posix.syscall(cs, SYS_IO_URING_REGISTER, ringFd, IORING_REGISTER_PROBE, probe.address(), PROBE_OPS,
                    0, 0);
            String kernel = Diagnosis.read(Diagnosis.OSRELEASE);
            String on = kernel == null ? "" : " (Linux " + kernel + ")";
            if (r < 0) {
                int errno = (int) -r;
                return Diagnosis.failure("io_uring_register(IORING_REGISTER_PROBE)", errno,
                        "this kernel" + on + " cannot list its io_uring operations, so it predates Linux 5.6 and lacks"
                                + " IORING_OP_READ/WRITE: upgrade the kernel, or choose io_method=worker");
            }
            int last = probe.get(JAVA_BYTE, PROBE_LAST_OP) & 0xff;
            StringBuilder missing = new StringBuilder();
            for (int i = 0; i < OPS.length; i++) {
                int op = OPS[i];
                boolean ok = op <= last && (probe.get(JAVA_SHORT,
                        PROBE_HEADER_BYTES + op * PROBE_OP_BYTES + PROBE_OP_FLAGS) & IO_URING_OP_SUPPORTED) != 0;
                if (!ok) {
                    missing.append(missing.isEmpty() ? "" : ", ").append(NAMES[i]);
                }
            }
            return missing.isEmpty() ? null : "io_uring on this kernel" + on + " lacks " + missing
                    + " (IORING_OP_READ/WRITE need Linux 5.6): upgrade the kernel, or choose io_method=worker";
        }
    }
}
