package org.pageio.settings;

import java.math.BigInteger;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * One setting as {@code pageio:settings} shows it and {@code pageio:set} parses it: its PostgreSQL
 * name, the configuration PID and property that hold it, its type, unit, PostgreSQL's context, how a
 * change is applied here, its valid range and its default. Built from a Metatype attribute
 * definition ({@link SettingsService}) plus {@link #CATALOG}; immutable.
 *
 * @param name        the PostgreSQL name ({@code effective_io_concurrency}, {@code io_method})
 * @param pid         the configuration PID
 * @param property    the configuration property ({@code ioMethod.target} for {@code io_method})
 * @param kind        how the value is parsed
 * @param unit        the unit the value is stored in
 * @param context     PostgreSQL's context: postmaster, sighup, superuser, user (pageio for our own)
 * @param applies     how a change is applied here: {@code live} or {@code restart} (the buffer manager restarts)
 * @param min         the smallest valid value, or null (INTEGER and REAL; a REAL's bounds are whole
 *                    numbers, as PostgreSQL's real settings here have: {@code bgwriter_lru_multiplier} 0..10)
 * @param max         the largest valid value, or null (INTEGER and REAL)
 * @param excludeZero 0 is not valid although it is between min and max ({@code io_workers}, {@code io_max_concurrency})
 * @param options     the valid values of an ENUM or METHOD setting
 * @param defaultValue the default as stored (Integer, Boolean, String), or null
 */
public record Setting(String name, String pid, String property, Kind kind, Unit unit, String context, String applies,
        Long min, Long max, boolean excludeZero, List<String> options, Object defaultValue) {

    /** How a value is parsed. */
    public enum Kind { INTEGER, REAL, BOOLEAN, ENUM, STRING, METHOD }

    /** The unit a value is stored in; PostgreSQL's spelling. */
    public enum Unit {
        NONE(""), BLOCKS("8kB"), MS("ms");

        public final String label;

        Unit(String label) {
            this.label = label;
        }
    }

    public static final String BUFMGR_PID = "org.pageio.bufmgr";
    public static final String WORKER_PID = "org.pageio.method.worker";
    public static final String URING_PID = "org.pageio.method.uring";
    /** {@code io_method=posix_aio}'s PID: glibc's {@code aio_init} sizes. */
    public static final String POSIX_AIO_PID = "org.pageio.method.posixaio";
    /** The table service's PID: {@code scan_sets_visibility_map}, applied live to the next scan. */
    public static final String TABLE_PID = "org.pageio.table";
    /** The property {@code io_method} is derived from. */
    public static final String METHOD_TARGET = "ioMethod.target";
    public static final String IO_METHOD = "io_method";

    /** The setting naming the method used while io_method's is not registered. */
    public static final String IO_METHOD_FALLBACK = "io_method_fallback";
    /** The range of io_method while no method is registered (a template written before any registers). */
    static final String ANY_METHOD = "a registered, available I/O method: pageio:methods lists them";

    /**
     * What Metatype does not say: unit, PostgreSQL's context, 0 as an invalid value, and for a text
     * setting the values it takes ({@code range}; null: any text), by name.
     */
    record Known(String name, Unit unit, String context, boolean excludeZero, String range) {
        Known(String name, Unit unit, String context, boolean excludeZero) {
            this(name, unit, context, excludeZero, null);
        }
    }

    static final List<Known> CATALOG = List.of(
            new Known("shared_buffers", Unit.BLOCKS, "postmaster", false),
            new Known("huge_pages", Unit.NONE, "postmaster", false),
            new Known("effective_io_concurrency", Unit.NONE, "user", false),
            new Known("maintenance_io_concurrency", Unit.NONE, "user", false),
            new Known("io_combine_limit", Unit.BLOCKS, "user", false),
            new Known("io_max_combine_limit", Unit.BLOCKS, "postmaster", false),
            new Known("io_max_concurrency", Unit.NONE, "postmaster", true),
            new Known("zero_damaged_pages", Unit.NONE, "superuser", false),
            new Known("ignore_checksum_failure", Unit.NONE, "superuser", false),
            new Known("track_io_timing", Unit.NONE, "superuser", false),
            new Known("read_stream_lookahead", Unit.NONE, "pageio", false),
            new Known("read_stream_policy", Unit.NONE, "pageio", false),
            new Known("io_uring_registered_buffers", Unit.NONE, "pageio", false),
            new Known(IO_METHOD, Unit.NONE, "postmaster", false),
            new Known(IO_METHOD_FALLBACK, Unit.NONE, "pageio", false, "a registered method name, or empty for none"),
            new Known("io_min_workers", Unit.NONE, "sighup", false),
            new Known("io_max_workers", Unit.NONE, "sighup", false),
            new Known("io_worker_idle_timeout", Unit.MS, "sighup", false),
            new Known("io_worker_launch_interval", Unit.MS, "sighup", false),
            new Known("io_workers", Unit.NONE, "sighup", true),
            new Known("io_worker_policy", Unit.NONE, "pageio", false),
            // PostgreSQL: bgwriter_delay integer ms 10..10000, bgwriter_lru_maxpages integer 0..1073741823,
            // bgwriter_lru_multiplier real 0..10; all three sighup
            new Known("bgwriter_delay", Unit.MS, "sighup", false),
            new Known("bgwriter_lru_maxpages", Unit.NONE, "sighup", false),
            new Known("bgwriter_lru_multiplier", Unit.NONE, "sighup", false),
            new Known("io_hang_warning", Unit.MS, "sighup", false),
            new Known("io_uring_force_async", Unit.NONE, "pageio", false),
            // glibc's aio_init: the pool's sizes take effect once per process, before its first request;
            // the idle time at once (seconds, as glibc takes it)
            new Known("posix_aio_threads", Unit.NONE, "postmaster", false),
            new Known("posix_aio_num", Unit.NONE, "postmaster", false),
            new Known("posix_aio_idle_time", Unit.NONE, "sighup", false),
            new Known("posix_aio_fds_per_file", Unit.NONE, "sighup", false),
            // pageio's switch between PostgreSQL 19's read-only scans that set the visibility map on
            // access (on) and PostgreSQL 18's, where only VACUUM sets it (off); PostgreSQL has no GUC for it
            new Known("scan_sets_visibility_map", Unit.NONE, "pageio", false));

    static Known known(String name) {
        for (Known k : CATALOG) {
            if (k.name().equals(name)) {
                return k;
            }
        }
        return new Known(name, Unit.NONE, "pageio", false);
    }

    /**
     * How a change of this PID is applied: the worker pool, io_uring and the table service take it live; the buffer manager swaps
     * the method live (io_method and the io_method_* settings), restarts its background writer
     * with the bgwriter_* settings, and restarts itself for the rest.
     */
    static String appliesFor(String pid) {
        return WORKER_PID.equals(pid) || URING_PID.equals(pid) || TABLE_PID.equals(pid) ? "live" : "restart";
    }

    /**
     * How a setting applies that takes effect only when the process starts again: glibc sizes its
     * POSIX AIO pool once per process ({@code posix_aio_threads}, {@code posix_aio_num}). Stored at
     * once; nothing restarts.
     */
    static final String NEXT_START = "next start";

    /** {@link #appliesFor(String)} for one setting. */
    static String appliesFor(String pid, String name) {
        if (POSIX_AIO_PID.equals(pid)) {
            return name.equals("posix_aio_idle_time") || name.equals("posix_aio_fds_per_file") ? "live" : NEXT_START;
        }
        return BUFMGR_PID.equals(pid) && (name.startsWith("io_method") || name.startsWith("bgwriter_")
                || name.equals("io_hang_warning")) ? "live"
                : appliesFor(pid);
    }

    /** The {@code io_method} setting, over the registered method names. */
    static Setting ioMethod(List<String> methods, String defaultMethod) {
        return new Setting(IO_METHOD, BUFMGR_PID, METHOD_TARGET, Kind.METHOD, Unit.NONE, "postmaster", "live", null,
                null, false, List.copyOf(methods), defaultMethod);
    }

    /** The valid values, as PostgreSQL's min_val/max_val/enumvals would say them. */
    public String range() {
        return switch (kind) {
            case BOOLEAN -> "on, off";
            case ENUM, METHOD -> options.isEmpty() ? (kind == Kind.METHOD ? ANY_METHOD : "") : String.join(", ", options);
            case STRING -> {
                String r = known(name).range();
                yield r == null ? "" : r;
            }
            case INTEGER, REAL -> {
                // an INTEGER is stored as an int: where Metatype names no bound, the type's is the bound
                Long lo = kind == Kind.INTEGER && min == null ? Long.valueOf(Integer.MIN_VALUE) : min;
                Long hi = kind == Kind.INTEGER && max == null ? Long.valueOf(Integer.MAX_VALUE) : max;
                String r;
                if (lo != null && hi != null) {
                    r = excludeZero && lo < 0 && hi > 0
                            ? (lo == -1 ? "-1" : lo + "..-1") + ", 1.." + hi
                            : lo + ".." + hi;
                } else if (lo != null) {
                    r = ">= " + lo;
                } else if (hi != null) {
                    r = "<= " + hi;
                } else {
                    r = "any number";
                }
                yield unit == Unit.NONE ? r : r + " (" + unit.label + ")";
            }
        };
    }

    /** A stored value as the settings view shows it: booleans on/off, io_method by name. */
    public String show(Object stored) {
        if (stored == null) {
            return "";
        }
        if (kind == Kind.BOOLEAN) {
            return Boolean.parseBoolean(String.valueOf(stored)) ? "on" : "off";
        }
        if (kind == Kind.METHOD) {
            return methodOf(String.valueOf(stored));
        }
        if (stored instanceof String[] a) {
            return String.join(",", a);
        }
        return String.valueOf(stored);
    }

    /** {@code (io.method=worker)} → {@code worker}; any other filter as it is. */
    static String methodOf(String target) {
        String t = target.strip();
        String prefix = "(io.method=";
        if (t.startsWith(prefix) && t.endsWith(")") && t.indexOf('(', 1) < 0) {
            return t.substring(prefix.length(), t.length() - 1);
        }
        return t;
    }

    static String targetOf(String method) {
        return "(io.method=" + method + ")";
    }

    /**
     * Parses {@code text} into the value to store (Integer, Boolean, String), or throws an
     * {@link IllegalArgumentException} whose one-line message names the setting and what is valid.
     * Range, unit and option checks are made here; {@code extra} may refuse more (Metatype's
     * {@code validate}), returning a reason or null.
     */
    public Object parse(String text, Predicate<String> extraValid) {
        String v = text.strip();
        return switch (kind) {
            case BOOLEAN -> parseBoolean(v);
            case ENUM, METHOD -> {
                for (String o : options) {
                    if (o.equalsIgnoreCase(v)) {
                        yield kind == Kind.METHOD ? targetOf(o) : o;
                    }
                }
                throw invalid(text, kind == Kind.METHOD
                        ? (options.isEmpty() ? "no I/O method is registered" : "registered methods are " + range())
                        : "valid values are " + range());
            }
            case STRING -> v;
            case REAL -> {
                double d;
                try {
                    d = Double.parseDouble(v);
                } catch (NumberFormatException e) {
                    throw invalid(text, "it takes a number; valid range " + range());
                }
                if (Double.isNaN(d) || Double.isInfinite(d) || (min != null && d < min) || (max != null && d > max)
                        || (extraValid != null && !extraValid.test(v))) {
                    throw new IllegalArgumentException(name + " = " + v + " is outside the valid range " + range());
                }
                yield d;
            }
            case INTEGER -> {
                long n = parseInteger(v, text); // a long: a value beyond the int type is refused with its own value
                long lo = min != null ? min : Integer.MIN_VALUE;
                long hi = max != null ? max : Integer.MAX_VALUE;
                boolean inRange = n >= lo && n <= hi && !(excludeZero && n == 0);
                if (!inRange || (extraValid != null && !extraValid.test(String.valueOf(n)))) {
                    String shown;
                    if (unit == Unit.BLOCKS) {
                        shown = String.valueOf(n).equals(v) ? v + " (× 8kB = " + bytes(n) + ")" : v + " (" + n + " × 8kB)";
                    } else {
                        shown = unit == Unit.NONE || String.valueOf(n).equals(v) ? v : v + " (" + n + " " + unit.label + ")";
                    }
                    throw new IllegalArgumentException(name + " = " + shown + " is outside the valid range " + range()
                            + (unit == Unit.BLOCKS ? ", that is " + bytes(lo) + ".." + bytes(hi) : ""));
                }
                yield (int) n;
            }
        };
    }

    private Boolean parseBoolean(String v) {
        switch (v.toLowerCase(Locale.ROOT)) {
            case "on", "true", "yes", "1" -> {
                return Boolean.TRUE;
            }
            case "off", "false", "no", "0" -> {
                return Boolean.FALSE;
            }
            default -> throw invalid(v, "it takes on or off (true/false, yes/no, 1/0)");
        }
    }

    private IllegalArgumentException invalid(String text, String valid) {
        return new IllegalArgumentException("invalid value for " + name + ": '" + text + "'; " + valid);
    }

    /** A number with an optional PostgreSQL unit, converted to this setting's unit. */
    private long parseInteger(String v, String text) {
        int i = 0;
        if (i < v.length() && (v.charAt(i) == '-' || v.charAt(i) == '+')) {
            i++;
        }
        int digits = i;
        while (i < v.length() && Character.isDigit(v.charAt(i))) {
            i++;
        }
        if (i == digits) {
            throw invalid(text, "it takes an integer" + unitsHint());
        }
        long n;
        try {
            n = Long.parseLong(v.substring(0, i));
        } catch (NumberFormatException e) {
            throw invalid(text, "the number is too large; valid range " + range());
        }
        String u = v.substring(i).strip();
        if (u.isEmpty()) {
            return n;
        }
        long factor; // in the smallest unit: bytes or microseconds
        long base;
        switch (unit) {
            case NONE -> throw invalid(text, name + " takes no unit; valid range " + range());
            case BLOCKS -> {
                base = 8192;
                factor = switch (u) {
                    case "B" -> 1L;
                    case "kB" -> 1L << 10;
                    case "MB" -> 1L << 20;
                    case "GB" -> 1L << 30;
                    case "TB" -> 1L << 40;
                    default -> throw invalid(text, "valid units for " + name + " are B, kB, MB, GB and TB (or none: 8kB blocks)");
                };
            }
            case MS -> {
                base = 1000;
                factor = switch (u) {
                    case "us" -> 1L;
                    case "ms" -> 1000L;
                    case "s" -> 1000_000L;
                    case "min" -> 60_000_000L;
                    case "h" -> 3_600_000_000L;
                    case "d" -> 86_400_000_000L;
                    default -> throw invalid(text, "valid units for " + name + " are us, ms, s, min, h and d (or none: ms)");
                };
            }
            default -> throw new AssertionError(unit);
        }
        long small;
        try {
            small = Math.multiplyExact(n, factor);
        } catch (ArithmeticException e) {
            throw invalid(text, "too large; valid range " + range());
        }
        if (small % base != 0) {
            throw invalid(text, "not a whole number of " + unit.label + (unit == Unit.BLOCKS ? " blocks" : ""));
        }
        return small / base;
    }

    /**
     * {@code blocks} of 8kB in PostgreSQL's largest unit that divides them ({@code 128kB},
     * {@code 1TB}), else whole terabytes rounded down ({@code about 7450TB}); no overflow for any long.
     */
    static String bytes(long blocks) {
        BigInteger b = BigInteger.valueOf(blocks).shiftLeft(13);
        String[] units = {"TB", "GB", "MB", "kB"};
        for (int i = 0; i < units.length; i++) {
            int shift = 40 - 10 * i;
            BigInteger[] qr = b.divideAndRemainder(BigInteger.ONE.shiftLeft(shift));
            if (qr[1].signum() == 0 && qr[0].signum() != 0) {
                return qr[0] + units[i];
            }
            if (i == 0 && qr[0].abs().compareTo(BigInteger.ONE) >= 0) {
                return "about " + qr[0] + units[i];
            }
        }
        return b.shiftRight(10) + "kB";
    }

    private String unitsHint() {
        return switch (unit) {
            case NONE -> "";
            case BLOCKS -> " of 8kB blocks or a size like 128MB, 8kB";
            case MS -> " of ms or a time like 60s, 100ms, 1min";
        };
    }
}
