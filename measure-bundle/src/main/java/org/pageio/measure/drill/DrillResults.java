package org.pageio.measure.drill;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;

import org.pageio.settings.DataDirectory;

/**
 * Where drill results are, for readers such as the Web Console. A results directory holds, per
 * drill, {@code <stamp>.json}, {@code <stamp>.md} and {@code <stamp>.svg}, where the stamp is the
 * drill's start time in UTC, {@code yyyyMMdd'T'HHmmss'Z'} (so the names sort by time). The JSON
 * is written last, each file by rename, so the newest JSON always has its Markdown and chart.
 * The directory is the framework/system property {@value #PROPERTY} ({@code ./pageio drill} sets
 * it to {@code <checkout>/drill-results}), else {@code ./drill-results}. Stateless; any thread.
 */
public final class DrillResults {

    /** Framework/system property: the results directory. */
    public static final String PROPERTY = DataDirectory.DRILL_RESULTS_PROPERTY;
    public static final String JSON = ".json";
    public static final String MARKDOWN = ".md";
    public static final String SVG = ".svg";

    private static final java.util.regex.Pattern STAMP = java.util.regex.Pattern.compile("\\d{8}T\\d{6}Z\\.json");

    /**
     * One drill's files.
     *
     * @param stamp    the drill's start time, {@code yyyyMMdd'T'HHmmss'Z'}
     * @param json     the JSON (always there)
     * @param markdown the Markdown, or null when missing
     * @param svg      the chart, or null when missing (results of older drills)
     */
    public record Saved(String stamp, Path json, Path markdown, Path svg) {
    }

    private DrillResults() {
    }

    /** The results directory for a property value (null or blank = {@code ./drill-results}), absolute. */
    public static Path directory(String property) {
        return Path.of(property == null || property.isBlank() ? "drill-results" : property).toAbsolutePath().normalize();
    }

    /** The newest drill in {@code dir}, or empty when there is none (or no such directory). */
    public static Optional<Saved> latest(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return Optional.empty();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> STAMP.matcher(p.getFileName().toString()).matches()).max(Path::compareTo).map(json -> {
                String stamp = json.getFileName().toString().substring(0, 16);
                Path md = dir.resolve(stamp + MARKDOWN);
                Path svg = dir.resolve(stamp + SVG);
                return new Saved(stamp, json, Files.isRegularFile(md) ? md : null, Files.isRegularFile(svg) ? svg : null);
            });
        }
    }
}
