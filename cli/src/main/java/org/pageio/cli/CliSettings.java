package org.pageio.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.pageio.bufmgr.BufMgrSettings;

/**
 * What the command-line tool takes from a data directory's settings file
 * ({@code <data>/conf/org.pageio.settings.cfg}, the file the container reads and {@code pageio:set}
 * writes; one {@code name = value} a line, {@code #} comments): the method and the settings that
 * shape a read stream. Every other line is the container's business and is left alone here.
 *
 * <table>
 *   <caption>The settings the tool applies</caption>
 *   <tr><th>setting</th><th>valid values</th><th>default</th></tr>
 *   <tr><td>{@code io_method}</td><td>{@code sync}, {@code worker}, {@code io_uring}, {@code direct}, {@code posix_aio}</td><td>{@code worker}</td></tr>
 *   <tr><td>{@code effective_io_concurrency}</td><td>0 to 1000</td><td>16</td></tr>
 *   <tr><td>{@code io_combine_limit}</td><td>1 to 128 (8 kB blocks)</td><td>16</td></tr>
 *   <tr><td>{@code read_stream_lookahead}</td><td>{@code pg18}, {@code pg19}</td><td>{@code pg19}</td></tr>
 *   <tr><td>{@code read_stream_policy}</td><td>{@code pageio}, {@code postgresql}</td><td>{@code pageio}</td></tr>
 * </table>
 *
 * A value out of range is refused as PostgreSQL refuses it, naming the setting, the file and the
 * valid values; the tool then does nothing. The methods run with their own defaults (their pool
 * sizes are the container's settings: a one-shot command has no use for them).
 *
 * @param method     the {@code io_method}
 * @param bufmgr     the buffer manager's settings with the read-stream settings applied
 */
record CliSettings(String method, BufMgrSettings bufmgr) {

    /** The methods built into the tool, in {@code pageio:methods}' order. */
    static final List<String> METHODS = List.of("sync", "worker", "io_uring", "direct", "posix_aio");
    /** The settings file under a data directory. */
    static final String FILE = "conf/org.pageio.settings.cfg";

    /** Thrown for a line of the settings file the tool refuses; the message is the whole story. */
    static final class InvalidSetting extends Exception {
        InvalidSetting(String message) {
            super(message);
        }
    }

    /** The defaults: {@code io_method = worker} and the buffer manager's defaults. */
    static CliSettings defaults() {
        return new CliSettings("worker", BufMgrSettings.defaults());
    }

    /** The settings of data directory {@code dataDir}: its settings file over the defaults (no file: the defaults). */
    static CliSettings of(Path dataDir) throws IOException, InvalidSetting {
        Path file = dataDir.resolve(FILE);
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return defaults();
        }
        String method = "worker";
        BufMgrSettings.Builder b = BufMgrSettings.defaults().toBuilder();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int eq = line.indexOf('=');
            if (eq < 0) {
                continue; // not a setting line; the container says what it thinks of it
            }
            String name = line.substring(0, eq).strip();
            String value = unquote(line.substring(eq + 1).strip());
            String where = " (" + file + ", line " + (i + 1) + ")";
            switch (name) {
                case "io_method" -> {
                    if (!METHODS.contains(value)) {
                        throw new InvalidSetting("invalid value for parameter \"io_method\": \"" + value + "\"" + where
                                + "; available values: " + String.join(", ", METHODS));
                    }
                    method = value;
                }
                case "effective_io_concurrency" -> b.effectiveIoConcurrency(integer(name, value, 0, 1000, where));
                case "io_combine_limit" -> b.ioCombineLimit(integer(name, value, 1, 128, where));
                case "read_stream_lookahead" -> b.readStreamLookahead(switch (value.toLowerCase(Locale.ROOT)) {
                    case "pg18" -> BufMgrSettings.Lookahead.PG18;
                    case "pg19" -> BufMgrSettings.Lookahead.PG19;
                    default -> throw new InvalidSetting("invalid value for parameter \"read_stream_lookahead\": \"" + value
                            + "\"" + where + "; available values: pg18, pg19");
                });
                case "read_stream_policy" -> {
                    try {
                        b.readStreamPolicy(BufMgrSettings.ReadStreamPolicy.parse(value));
                    } catch (IllegalArgumentException e) {
                        throw new InvalidSetting("invalid value for parameter \"read_stream_policy\": \"" + value + "\""
                                + where + "; available values: pageio, postgresql");
                    }
                }
                default -> {
                    // the container's: shared_buffers, the workers' pool, the background writer …
                }
            }
        }
        return new CliSettings(method, b.build());
    }

    private static int integer(String name, String value, int min, int max, String where) throws InvalidSetting {
        int v;
        try {
            v = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new InvalidSetting("invalid value for parameter \"" + name + "\": \"" + value + "\"" + where
                    + "; an integer from " + min + " to " + max);
        }
        if (v < min || v > max) {
            throw new InvalidSetting(v + " is outside the valid range for parameter \"" + name + "\" (" + min + " .. " + max
                    + ")" + where);
        }
        return v;
    }

    private static String unquote(String v) {
        if (v.length() >= 2 && (v.startsWith("\"") && v.endsWith("\"") || v.startsWith("'") && v.endsWith("'"))) {
            return v.substring(1, v.length() - 1);
        }
        return v;
    }
}
