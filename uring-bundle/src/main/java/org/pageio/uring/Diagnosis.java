package org.pageio.uring;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.pageio.posix.Errno;

/**
 * Turns a failed ring call into a message a person can act on: the call, the errno by name, the
 * likely cause read from the system ({@code /proc}), and the fix (TigerBeetle's "likely cause +
 * exact remedy"). Only on error paths; allocates freely. Thread-safe.
 */
final class Diagnosis {

    static final Path IO_URING_DISABLED = Path.of("/proc/sys/kernel/io_uring_disabled");
    static final Path IO_URING_GROUP = Path.of("/proc/sys/kernel/io_uring_group");
    static final Path OSRELEASE = Path.of("/proc/sys/kernel/osrelease");
    /** The calling thread's status: seccomp filters are per thread. */
    static final Path THREAD_STATUS = Path.of("/proc/thread-self/status");
    static final Path LIMITS = Path.of("/proc/self/limits");

    private static final String OTHER_METHOD = "or choose io_method=worker, which needs no io_uring";

    /**
     * What the system says about the things that make ring creation fail, read when the
     * failure happens. A field is {@code null} when its file could not be read.
     *
     * @param ioUringDisabled  {@code kernel.io_uring_disabled} (0, 1 or 2; absent before Linux 6.6)
     * @param ioUringGroup     {@code kernel.io_uring_group}
     * @param seccomp          the {@code Seccomp:} value of this thread (0 off, 1 strict, 2 filter)
     * @param seccompFilters   the {@code Seccomp_filters:} value of this thread
     * @param kernel           {@code uname -r}
     * @param memlock          the {@code Max locked memory} soft limit, in bytes or "unlimited"
     * @param openFiles        the {@code Max open files} soft limit
     */
    record Env(String ioUringDisabled, String ioUringGroup, String seccomp, String seccompFilters, String kernel,
               String memlock, String openFiles) {

        /** Reads everything now, in the calling thread (seccomp state is per thread). */
        static Env current() {
            String status = read(THREAD_STATUS);
            String limits = read(LIMITS);
            return new Env(read(IO_URING_DISABLED), read(IO_URING_GROUP), field(status, "Seccomp:"),
                    field(status, "Seccomp_filters:"), read(OSRELEASE), limit(limits, "Max locked memory"),
                    limit(limits, "Max open files"));
        }
    }

    private Diagnosis() {
    }

    /** {@code "<operation> failed: <ERRNO> (<text>): <hint>"}. */
    static String failure(String operation, int errno, String hint) {
        StringBuilder sb = new StringBuilder(operation).append(" failed: ").append(Errno.name(errno))
                .append(" (").append(Errno.message(errno)).append(')');
        if (hint != null && !hint.isEmpty()) {
            sb.append(": ").append(hint);
        }
        return sb.toString();
    }

    /** The likely cause and the fix for a failed {@code io_uring_setup}, from the system now. */
    static String setupHint(int errno) {
        return setupHint(errno, Env.current());
    }

    static String setupHint(int errno, Env env) {
        return switch (errno) {
            case Errno.EPERM -> epermHint(env);
            case Errno.ENOSYS -> "this kernel" + kernel(env) + " has no io_uring system calls: io_uring needs"
                    + " Linux 5.6 or later built with CONFIG_IO_URING=y (some seccomp profiles also answer ENOSYS"
                    + seccompState(env) + "); upgrade the kernel, " + OTHER_METHOD;
            case Errno.ENOMEM -> memoryHint(env);
            case Errno.EMFILE -> "this process has no free file descriptor (Max open files "
                    + orUnknown(env.openFiles()) + " in " + LIMITS + "); every session's ring takes one:"
                    + " raise the limit (ulimit -n, LimitNOFILE= in a systemd unit, --ulimit nofile= in Docker)"
                    + " to at least max_sessions plus the files pageio keeps open";
            case Errno.ENFILE -> "the system-wide file table is full (fs.file-max, /proc/sys/fs/file-nr):"
                    + " raise fs.file-max or close files elsewhere";
            case Errno.EINVAL -> "the kernel" + kernel(env) + " rejected the ring parameters; entries must be"
                    + " 1..32768 and the kernel must know every setup flag (Linux 5.6 or later): upgrade the kernel, "
                    + OTHER_METHOD;
            case Errno.EFAULT -> "the kernel could not read the parameters: a bug in pageio, please report it";
            default -> "unexpected error from io_uring_setup on Linux" + kernel(env) + "; " + OTHER_METHOD;
        };
    }

    /** The likely cause and the fix for a failed mmap of ring memory. */
    static String mmapHint(int errno) {
        if (errno == Errno.ENOMEM || errno == Errno.EAGAIN) {
            return memoryHint(Env.current());
        }
        return "the ring memory could not be mapped; " + OTHER_METHOD;
    }

    private static String memoryHint(Env env) {
        return "the kernel could not allocate or lock the ring memory: before Linux 5.12 rings count against"
                + " RLIMIT_MEMLOCK (Max locked memory " + orUnknown(env.memlock()) + " in " + LIMITS
                + ", kernel" + kernel(env) + "); raise it (ulimit -l, LimitMEMLOCK= in a systemd unit,"
                + " --ulimit memlock= in Docker), lower io_max_concurrency or max_sessions, or free memory";
    }

    private static String epermHint(Env env) {
        StringBuilder sb = new StringBuilder("io_uring is blocked for this process. ");
        String v = env.ioUringDisabled() == null ? null : env.ioUringDisabled().strip();
        String sysctl = "sysctl kernel.io_uring_disabled";
        boolean filtered = "2".equals(env.seccomp() == null ? null : env.seccomp().strip());
        if (v == null) {
            sb.append(sysctl).append(": ").append(IO_URING_DISABLED)
                    .append(" is not readable (it exists from Linux 6.6 on), so it is not the cause. ");
        } else {
            switch (v) {
                case "0" -> sb.append(sysctl).append(" = 0 (").append(IO_URING_DISABLED)
                        .append("): io_uring is allowed for everybody, so the sysctl is not the cause. ");
                case "1" -> sb.append(sysctl).append(" = 1 (").append(IO_URING_DISABLED)
                        .append("): only processes with CAP_SYS_ADMIN or in group kernel.io_uring_group (gid ")
                        .append(orUnknown(env.ioUringGroup()))
                        .append(") may create rings: add the user to that group, or as root run"
                                + " `sysctl -w kernel.io_uring_disabled=0`. ");
                case "2" -> sb.append(sysctl).append(" = 2 (").append(IO_URING_DISABLED)
                        .append("): io_uring is disabled for every process: as root run"
                                + " `sysctl -w kernel.io_uring_disabled=0` (and set it in /etc/sysctl.d to keep it). ");
                default -> sb.append(sysctl).append(" = ").append(v).append(" (").append(IO_URING_DISABLED).append("). ");
            }
        }
        if (filtered) {
            sb.append("This thread runs under a seccomp filter (Seccomp: 2, Seccomp_filters: ")
                    .append(orUnknown(env.seccompFilters())).append(" in ").append(THREAD_STATUS).append(")");
        } else {
            sb.append("Seccomp: ").append(orUnknown(env.seccomp())).append(" for this thread in ").append(THREAD_STATUS);
        }
        if (filtered || "0".equals(v) || v == null) {
            sb.append(": the likely cause is a seccomp profile that denies io_uring_setup, such as Docker's default"
                    + " profile (since Docker 25) or containerd 2.0's RuntimeDefault (Kubernetes): run with a seccomp profile"
                    + " that allows io_uring_setup, io_uring_enter and io_uring_register (e.g. docker run"
                    + " --security-opt seccomp=<profile.json>), ");
        } else {
            sb.append("; a seccomp profile can also deny io_uring_setup (Docker's default profile does): allow"
                    + " io_uring_setup, io_uring_enter and io_uring_register there, ");
        }
        return sb.append(OTHER_METHOD).toString();
    }

    private static String seccompState(Env env) {
        return env.seccomp() == null ? "" : "; Seccomp: " + env.seccomp().strip() + " for this thread";
    }

    private static String kernel(Env env) {
        return env.kernel() == null ? "" : " (Linux " + env.kernel().strip() + ")";
    }

    private static String orUnknown(String s) {
        return s == null ? "unknown" : s.strip();
    }

    static String read(Path p) {
        try {
            return Files.readString(p).strip();
        } catch (IOException | SecurityException | UnsupportedOperationException e) {
            return null;
        }
    }

    /** The value after {@code key} on its line of a {@code /proc/.../status} text. */
    static String field(String text, String key) {
        if (text == null) {
            return null;
        }
        for (String line : text.split("\n")) {
            if (line.startsWith(key)) {
                return line.substring(key.length()).strip();
            }
        }
        return null;
    }

    /** The soft limit of {@code name} in a {@code /proc/self/limits} text, with its unit when it has one. */
    static String limit(String text, String name) {
        if (text == null) {
            return null;
        }
        for (String line : text.split("\n")) {
            if (line.startsWith(name)) {
                String[] cols = line.substring(name.length()).strip().split("\\s+");
                if (cols.length == 0 || cols[0].isEmpty()) {
                    return null;
                }
                return cols.length >= 3 && !"unlimited".equals(cols[0]) ? cols[0] + " " + cols[2] : cols[0];
            }
        }
        return null;
    }
}
