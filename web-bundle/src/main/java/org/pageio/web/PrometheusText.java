package org.pageio.web;

import java.math.BigDecimal;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Writes Prometheus' text exposition format, version 0.0.4: per metric family a {@code # HELP}
 * and a {@code # TYPE} line, then its samples, every sample of a family together.
 *
 * <p>Rules it keeps: names and label names match {@code [a-zA-Z_][a-zA-Z0-9_]*} (label names not
 * starting {@code __}), a counter's name ends in {@code _total}, label values escape {@code \},
 * {@code "} and the line feed, HELP text escapes {@code \} and the line feed, a family is declared
 * once and a series (name and labels) appears once. A broken rule is a programming error: it
 * throws {@link IllegalArgumentException} naming the family or series. One instance per scrape,
 * one thread.
 */
final class PrometheusText {

    /** The {@code Content-Type} of a response in this format. */
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");

    /** A metric family's type; the format's {@code # TYPE} word. */
    enum Type {
        COUNTER, GAUGE;

        String word() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final StringBuilder out = new StringBuilder(16 * 1024);
    private final Set<String> families = new HashSet<>();
    private final Set<String> series = new HashSet<>();
    private String family;

    /** Starts family {@code name}: its HELP and TYPE lines; the samples that follow belong to it. */
    PrometheusText family(String name, Type type, String help) {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("metric name '" + name + "' is not [a-zA-Z_:][a-zA-Z0-9_:]*");
        }
        if (type == Type.COUNTER != name.endsWith("_total")) {
            throw new IllegalArgumentException("metric " + name + ": a counter's name, and only a counter's, ends in _total");
        }
        if (!families.add(name)) {
            throw new IllegalArgumentException("metric family " + name + " declared twice");
        }
        family = name;
        out.append("# HELP ").append(name).append(' ');
        for (int i = 0; i < help.length(); i++) {
            char c = help.charAt(i);
            switch (c) {
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                default -> out.append(c);
            }
        }
        out.append('\n').append("# TYPE ").append(name).append(' ').append(type.word()).append('\n');
        return this;
    }

    /** A sample of the current family without labels. */
    PrometheusText sample(double value) {
        return sample(value, new String[0]);
    }

    /** A sample of the current family with labels given as name, value, name, value, … */
    PrometheusText sample(double value, String... labels) {
        if (family == null) {
            throw new IllegalArgumentException("a sample before any metric family");
        }
        if (labels.length % 2 != 0) {
            throw new IllegalArgumentException("metric " + family + ": labels come in name, value pairs");
        }
        int start = out.length();
        out.append(family);
        if (labels.length > 0) {
            out.append('{');
            for (int i = 0; i < labels.length; i += 2) {
                String label = labels[i];
                if (!LABEL.matcher(label).matches() || label.startsWith("__")) {
                    throw new IllegalArgumentException("metric " + family + ": label name '" + label + "' is not valid");
                }
                out.append(i == 0 ? "" : ",").append(label).append("=\"");
                escapeLabelValue(labels[i + 1] == null ? "" : labels[i + 1]);
                out.append('"');
            }
            out.append('}');
        }
        String key = out.substring(start);
        if (!series.add(key)) {
            throw new IllegalArgumentException("series " + key + " written twice");
        }
        out.append(' ').append(number(value)).append('\n');
        return this;
    }

    private void escapeLabelValue(String v) {
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            switch (c) {
                case '\\' -> out.append("\\\\");
                case '"' -> out.append("\\\"");
                case '\n' -> out.append("\\n");
                default -> out.append(c);
            }
        }
    }

    /**
     * A value as the format writes it: whole numbers without a fraction, others in plain decimals
     * (exponents only for the very large and very small), {@code NaN}, {@code +Inf}, {@code -Inf}.
     */
    static String number(double v) {
        if (Double.isNaN(v)) {
            return "NaN";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "+Inf" : "-Inf";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return Math.abs(v) < 1e15 && Math.abs(v) >= 1e-6 ? BigDecimal.valueOf(v).toPlainString() : Double.toString(v);
    }

    /** The exposition so far. */
    @Override
    public String toString() {
        return out.toString();
    }
}
