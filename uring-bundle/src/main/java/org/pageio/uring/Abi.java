package org.pageio.uring;

/**
 * The io_uring kernel ABI this package uses: system call numbers, struct offsets and flag values
 * ({@code include/uapi/linux/io_uring.h}).
 * Package-private constants; thread-safe.
 */
final class Abi {

    // ---- system calls (asm-generic numbers: the same on x86_64 and aarch64) ----
    static final long SYS_IO_URING_SETUP = 425;
    static final long SYS_IO_URING_ENTER = 426;
    static final long SYS_IO_URING_REGISTER = 427;

    // ---- struct io_uring_params (120 bytes) ----
    static final long PARAMS_BYTES = 120;
    static final long P_SQ_ENTRIES = 0;
    static final long P_CQ_ENTRIES = 4;
    static final long P_FLAGS = 8;
    static final long P_FEATURES = 20;
    static final long P_SQ_OFF = 40;
    static final long P_CQ_OFF = 80;

    // struct io_sqring_offsets, relative to P_SQ_OFF
    static final long SQO_HEAD = 0;
    static final long SQO_TAIL = 4;
    static final long SQO_RING_MASK = 8;
    static final long SQO_RING_ENTRIES = 12;
    static final long SQO_FLAGS = 16;
    static final long SQO_DROPPED = 20;
    static final long SQO_ARRAY = 24;

    // struct io_cqring_offsets, relative to P_CQ_OFF
    static final long CQO_HEAD = 0;
    static final long CQO_TAIL = 4;
    static final long CQO_RING_MASK = 8;
    static final long CQO_RING_ENTRIES = 12;
    static final long CQO_OVERFLOW = 16;
    static final long CQO_CQES = 20;

    // ---- mmap offsets on the ring fd ----
    static final long IORING_OFF_SQ_RING = 0L;
    static final long IORING_OFF_CQ_RING = 0x8000000L;
    static final long IORING_OFF_SQES = 0x10000000L;

    // ---- setup flags ----
    /** Keep submitting a batch past an SQE that fails at preparation (5.18). */
    static final int IORING_SETUP_SUBMIT_ALL = 1 << 7;

    // ---- features (params.features, out) ----
    static final int IORING_FEAT_SINGLE_MMAP = 1;
    static final int IORING_FEAT_NODROP = 1 << 1;
    static final int IORING_FEAT_EXT_ARG = 1 << 8;

    // ---- SQ ring flags (kernel-written) ----
    static final int IORING_SQ_CQ_OVERFLOW = 1 << 1;

    // ---- enter flags ----
    static final int IORING_ENTER_GETEVENTS = 1;
    static final int IORING_ENTER_EXT_ARG = 1 << 3;

    // ---- struct io_uring_sqe (64 bytes) ----
    static final long SQE_BYTES = 64;
    static final long SQE_OPCODE = 0;   // u8
    static final long SQE_FLAGS = 1;    // u8
    static final long SQE_FD = 4;       // s32
    static final long SQE_OFF = 8;      // u64
    static final long SQE_ADDR = 16;    // u64
    static final long SQE_LEN = 24;     // u32
    static final long SQE_RW_FLAGS = 28; // u32, union with fsync_flags
    static final long SQE_USER_DATA = 32; // u64
    static final long SQE_BUF_INDEX = 40; // u16, for *_FIXED: index of the registered buffer

    // ---- struct io_uring_cqe (16 bytes) ----
    static final long CQE_BYTES = 16;
    static final long CQE_USER_DATA = 0; // u64
    static final long CQE_RES = 8;       // s32

    // ---- opcodes ----
    static final byte IORING_OP_NOP = 0;
    static final byte IORING_OP_READV = 1;
    static final byte IORING_OP_WRITEV = 2;
    static final byte IORING_OP_FSYNC = 3;
    static final byte IORING_OP_READ_FIXED = 4;
    static final byte IORING_OP_WRITE_FIXED = 5;
    static final byte IORING_OP_READ = 22;
    static final byte IORING_OP_WRITE = 23;
    static final int IORING_FSYNC_DATASYNC = 1;

    // ---- io_uring_register: registered ("fixed") buffers, an array of struct iovec ----
    static final int IORING_REGISTER_BUFFERS = 0;
    static final int IORING_UNREGISTER_BUFFERS = 1;
    /** The kernel's limit on one registered buffer (1 GiB); larger regions are registered in parts. */
    static final long MAX_FIXED_BUFFER_BYTES = 1L << 30;

    // ---- io_uring_register: IORING_REGISTER_PROBE ----
    static final int IORING_REGISTER_PROBE = 8;
    /** struct io_uring_probe: 16-byte header, then {@code struct io_uring_probe_op} (8 bytes) each. */
    static final long PROBE_HEADER_BYTES = 16;
    static final long PROBE_OP_BYTES = 8;
    static final int PROBE_OPS = 256;
    static final long PROBE_LAST_OP = 0;  // u8
    static final long PROBE_OP_FLAGS = 2; // u16 within an op
    static final int IO_URING_OP_SUPPORTED = 1;

    // ---- struct io_uring_getevents_arg (24 bytes) and struct __kernel_timespec (16 bytes) ----
    static final long GETEVENTS_ARG_BYTES = 24;
    static final long GEA_TS = 16; // u64 pointer to the timespec

    private Abi() {
    }
}
