package org.pageio.measure.fio;

import java.util.List;
import java.util.Map;

/**
 * fio's own figures of one job, from its JSON output ({@code jobs[0]}, its {@code read} section,
 * or {@code write} for a write job). Immutable.
 *
 * @param runtimeNanos fio's runtime of the reads (or writes): {@code runtime}, in ms, start-up excluded
 * @param ioBytes      bytes transferred ({@code io_bytes}; for a replay, {@code total_ios} × the block size,
 *                     see {@link Fio#run})
 * @param ios          I/Os completed ({@code total_ios})
 * @param bwBytes      bandwidth in bytes per second ({@code bw_bytes})
 * @param iops         I/Os per second ({@code iops})
 * @param cpuNanos     fio's CPU time, {@code (usr_cpu + sys_cpu) / 100 × job_runtime}; -1 if its output has none
 */
public record FioResult(long runtimeNanos, long ioBytes, long ios, long bwBytes, double iops, long cpuNanos) {

    /** Reads the figures of the {@code read} (or, {@code write} true, the {@code write}) section of fio's first job. */
    public static FioResult parse(String output, boolean write) throws FioException {
        String section = write ? "write" : "read";
        Map<?, ?> job;
        Map<?, ?> io;
        try {
            Object root = Json.parse(output);
            if (!(root instanceof Map<?, ?> r) || !(r.get("jobs") instanceof List<?> jobs) || jobs.isEmpty()
                    || !(jobs.get(0) instanceof Map<?, ?> j)) {
                throw new FioException("fio's output has no jobs");
            }
            job = j;
            if (!(job.get(section) instanceof Map<?, ?> s)) {
                throw new FioException("fio's output has no \"" + section + "\" section");
            }
            io = s;
        } catch (IllegalArgumentException e) {
            throw new FioException(e.getMessage());
        }
        long runtimeMs = integer(io, section, "runtime");
        return new FioResult(runtimeMs * 1_000_000L, integer(io, section, "io_bytes"), integer(io, section, "total_ios"),
                integer(io, section, "bw_bytes"), number(io, section, "iops"), cpuNanos(job));
    }

    /** fio reports CPU as percentages of the job's runtime: (usr_cpu + sys_cpu) / 100 × job_runtime; -1 if absent. */
    private static long cpuNanos(Map<?, ?> job) {
        try {
            double usr = number(job, "jobs[0]", "usr_cpu");
            double sys = number(job, "jobs[0]", "sys_cpu");
            long runtimeMs = integer(job, "jobs[0]", "job_runtime");
            return (long) ((usr + sys) / 100 * runtimeMs * 1_000_000L);
        } catch (FioException e) {
            return -1;
        }
    }

    private static String text(Map<?, ?> m, String where, String key) throws FioException {
        Object v = m.get(key);
        if (v instanceof Json.Bare b) {
            return b.text();
        }
        if (v instanceof String s) {
            return s;
        }
        throw new FioException("fio's output has no " + where + "." + key);
    }

    private static long integer(Map<?, ?> m, String where, String key) throws FioException {
        String t = text(m, where, key);
        try {
            return Long.parseLong(t);
        } catch (NumberFormatException e) {
            return (long) number(m, where, key);
        }
    }

    private static double number(Map<?, ?> m, String where, String key) throws FioException {
        String t = text(m, where, key);
        try {
            return Double.parseDouble(t);
        } catch (NumberFormatException e) {
            throw new FioException("fio's output has " + where + "." + key + " = " + t + ", not a number");
        }
    }
}
