package org.pageio.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * CPU time per thread of this process during a run, from {@code /proc/self/task/<tid>/schedstat}
 * (nanoseconds on CPU, and waiting on a run queue) and {@code stat} (user / system split, in clock
 * ticks), grouped by thread name: the structural figure of a load (which thread did the copy into
 * the page cache, which built pages), which survives a shared machine where wall times do not.
 * A sampler thread reads every task each {@code periodMillis} (threads that exit between two
 * samples lose at most that much; the process's own total, read at the end, shows the rest), plus
 * the machine's {@code /proc/stat} (CPU used outside this process: the kernel's flusher threads,
 * other users).
 */
final class ThreadCpu implements AutoCloseable {

    /** One group's time: on CPU, user, system, waiting for a CPU (all ns). */
    static final class Sum {
        long cpu;
        long user;
        long sys;
        long runq;
        int threads;
    }

    private record Reading(String comm, long cpu, long runq, long user, long sys) {
    }

    private static final long TICK_NS = 10_000_000L; // USER_HZ = 100
    private final Map<Integer, Reading> start = new HashMap<>();
    private final Map<Integer, Reading> last = new HashMap<>();
    private final long[] machineStart;
    private final long processStart;
    private final long t0 = System.nanoTime();
    private final Thread sampler;
    private volatile boolean stop;
    private long[] machineEnd;
    private long processEnd;
    private long wall;

    ThreadCpu(int periodMillis) {
        machineStart = machine();
        processStart = process();
        sample(start);
        last.putAll(start);
        sampler = Thread.ofPlatform().name("bench cpu sampler").daemon().start(() -> {
            while (!stop) {
                try {
                    Thread.sleep(periodMillis);
                } catch (InterruptedException e) {
                    return;
                }
                synchronized (last) {
                    sample(last);
                }
            }
        });
    }

    @Override
    public void close() {
        stop = true;
        sampler.interrupt();
        try {
            sampler.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (last) {
            sample(last);
        }
        machineEnd = machine();
        processEnd = process();
        wall = System.nanoTime() - t0;
    }

    /** Group of a thread name (its first 15 characters, as the kernel keeps them). */
    static String group(String comm) {
        if (comm.startsWith("pageio loader b")) {
            return "builders";
        }
        if (comm.startsWith("pageio load iss")) {
            return "issuer";
        }
        if (comm.startsWith("pageio io worke")) {
            return "io-workers";
        }
        if (comm.startsWith("iou-wrk")) {
            return "io_uring-wq";
        }
        if (comm.startsWith("iou-sqp")) {
            return "io_uring-sqpoll";
        }
        if (comm.startsWith("pageio direct")) {
            return "direct-threads";
        }
        if (comm.startsWith("bench cpu")) {
            return "sampler";
        }
        return "jvm-other";
    }

    /** CPU per group over the run (the sampler excluded from nothing: it is listed). */
    Map<String, Sum> groups() {
        Map<String, Sum> out = new LinkedHashMap<>();
        for (String g : new String[] {"issuer", "builders", "io-workers", "io_uring-wq", "io_uring-sqpoll", "direct-threads",
                "jvm-other", "sampler"}) {
            out.put(g, new Sum());
        }
        synchronized (last) {
            for (Map.Entry<Integer, Reading> e : last.entrySet()) {
                Reading r = e.getValue();
                Reading s = start.get(e.getKey());
                if (s != null && !s.comm().equals(r.comm())) {
                    s = null; // tid reused
                }
                Sum sum = out.get(group(r.comm()));
                long cpu = r.cpu() - (s == null ? 0 : s.cpu());
                if (cpu <= 0) {
                    continue;
                }
                sum.cpu += cpu;
                sum.runq += r.runq() - (s == null ? 0 : s.runq());
                sum.user += (r.user() - (s == null ? 0 : s.user())) * TICK_NS;
                sum.sys += (r.sys() - (s == null ? 0 : s.sys())) * TICK_NS;
                sum.threads++;
            }
        }
        return out;
    }

    /** One line: each group's CPU seconds (user/sys), the process total, the machine's busy time outside this process. */
    String line() {
        StringBuilder sb = new StringBuilder("cpu s:");
        for (Map.Entry<String, Sum> e : groups().entrySet()) {
            Sum s = e.getValue();
            if (s.threads == 0) {
                continue;
            }
            sb.append(String.format(Locale.ROOT, " %s %.2f (u %.2f sy %.2f, %d thr, runq %.2f)", e.getKey(), s.cpu / 1e9, s.user / 1e9,
                    s.sys / 1e9, s.threads, s.runq / 1e9));
        }
        long busy = busy(machineEnd) - busy(machineStart);
        long proc = (processEnd - processStart) * TICK_NS;
        sb.append(String.format(Locale.ROOT, " | process %.2f; machine busy %.2f of %d cores x %.2f wall, outside this process %.2f,"
                + " iowait %.2f, steal %.2f", proc / 1e9, busy / 1e9, Runtime.getRuntime().availableProcessors(), wall / 1e9,
                (busy - proc) / 1e9, (machineEnd[4] - machineStart[4]) * TICK_NS / 1e9,
                (machineEnd[7] - machineStart[7]) * TICK_NS / 1e9));
        return sb.toString();
    }

    private static long busy(long[] m) {
        // user nice system idle iowait irq softirq steal: busy = all but idle, iowait, steal
        return (m[0] + m[1] + m[2] + m[5] + m[6]) * TICK_NS;
    }

    private static long[] machine() {
        try {
            String cpu = Files.readAllLines(Path.of("/proc/stat")).get(0);
            String[] f = cpu.trim().split("\\s+");
            long[] out = new long[8];
            for (int i = 0; i < 8; i++) {
                out[i] = Long.parseLong(f[i + 1]);
            }
            return out;
        } catch (IOException e) {
            return new long[8];
        }
    }

    /** utime + stime of the whole process (dead threads included), in ticks. */
    private static long process() {
        try {
            String s = Files.readString(Path.of("/proc/self/stat"));
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException e) {
            return 0;
        }
    }

    private static void sample(Map<Integer, Reading> into) {
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : tasks) {
                try {
                    int tid = Integer.parseInt(t.getFileName().toString());
                    String stat = Files.readString(t.resolve("stat"));
                    String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    String[] sch = Files.readString(t.resolve("schedstat")).trim().split(" ");
                    into.put(tid, new Reading(comm, Long.parseLong(sch[0]), Long.parseLong(sch[1]), Long.parseLong(f[11]),
                            Long.parseLong(f[12])));
                } catch (IOException | RuntimeException e) {
                    // the thread exited while being read
                }
            }
        } catch (IOException e) {
            // no /proc: nothing to report
        }
    }
}
