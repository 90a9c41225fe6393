package org.pageio.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Context switches of Linux tasks (threads), read from {@code /proc}: for the structural figures
 * of the worker benchmarks (switches per I/O), which mean something on a shared machine where
 * wall times do not. Not for hot paths: it reads files.
 */
final class TaskStats {

    private TaskStats() {
    }

    /** {voluntary, nonvoluntary} context switches of the calling thread so far. */
    static long[] self() {
        long[] r = new long[2];
        add(Path.of("/proc/thread-self/status"), r);
        return r;
    }

    /**
     * {voluntary, nonvoluntary} context switches so far, summed over this process's threads whose
     * kernel name ({@code comm}, the Java name cut to 15 bytes) starts with {@code prefix}; threads
     * that already exited are not counted (the benchmarks keep their pools for the whole trial).
     */
    static long[] threads(String prefix) {
        long[] r = new long[2];
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : tasks) {
                try {
                    String comm = Files.readString(t.resolve("comm")).strip();
                    if (comm.startsWith(prefix)) {
                        add(t.resolve("status"), r);
                    }
                } catch (IOException gone) {
                    // the thread exited meanwhile
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /proc/self/task: " + e, e);
        }
        return r;
    }

    private static void add(Path status, long[] r) {
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("voluntary_ctxt_switches:")) {
                    r[0] += Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                    r[1] += Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                }
            }
        } catch (IOException e) {
            // the thread exited meanwhile: count nothing for it
        }
    }
}
