package org.pageio.measure.drill;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.pageio.measure.drill.DrillResult.CaseResult;
import org.pageio.measure.drill.DrillResult.Series;
import org.pageio.measure.drill.DrillResult.Stats;

/**
 * The drill's bar chart as hand-written SVG: one panel per case, one horizontal bar per method or
 * baseline at its median execution time, a whisker from the fastest to the slowest counted run,
 * each panel on its own time scale (shorter is faster). Methods blue, Java baselines grey, fio
 * orange. Stateless.
 */
final class DrillChart {

    static final int WIDTH = 980;
    static final int LABEL_RIGHT = 232;
    static final int BAR_LEFT = 240;
    static final int BAR_WIDTH = 600;
    static final int ROW = 20;
    static final String METHOD = "#4c78a8";
    static final String JAVA = "#a0a0a0";
    static final String FIO = "#f58518";

    private DrillChart() {
    }

    static String svg(String heading, DrillResult r) {
        StringBuilder body = new StringBuilder();
        List<String> head = wrap(heading, 150);
        int top = 18 + 15 * (head.size() - 1);
        int y = top + 40;
        for (CaseResult c : r.cases()) {
            y += 10;
            List<String> title = wrap(c.drillCase().title(), 140);
            for (int i = 0; i < title.size(); i++) {
                body.append(text(10, y + 15 * i, 12, "bold", "start", title.get(i)));
            }
            y += 15 * (title.size() - 1) + 8;
            long max = 0;
            for (Series s : c.series()) {
                if (s.stats() != null) {
                    max = Math.max(max, s.stats().maxNanos());
                }
            }
            for (Series s : c.series()) {
                y += ROW;
                Stats st = s.stats();
                body.append(text(LABEL_RIGHT, y - 5, 11, "normal", "end", s.name()));
                if (st == null || max == 0) {
                    body.append(text(BAR_LEFT, y - 5, 11, "normal", "start", "no run counted (" + s.samples().size() + " made)"));
                    continue;
                }
                double scale = (double) BAR_WIDTH / max;
                double w = Math.max(1, st.medianNanos() * scale);
                String color = s.fio() ? FIO : s.baseline() ? JAVA : METHOD;
                body.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s: median"
                                + " %.1f ms, min %.1f ms, max %.1f ms, %d/%d runs counted</title></rect>%n", BAR_LEFT, y - ROW + 4, w,
                        ROW - 8, color, esc(s.name()), st.medianNanos() / 1e6, st.minNanos() / 1e6, st.maxNanos() / 1e6, st.counted(),
                        st.runs()));
                double x0 = BAR_LEFT + st.minNanos() * scale;
                double x1 = BAR_LEFT + st.maxNanos() * scale;
                int cy = y - ROW / 2;
                body.append(String.format(Locale.ROOT, "<path d=\"M%.1f %dH%.1fM%.1f %dV%dM%.1f %dV%d\" stroke=\"#222\""
                        + " stroke-width=\"1.2\" fill=\"none\"/>%n", x0, cy, x1, x0, cy - 5, cy + 5, x1, cy - 5, cy + 5));
                body.append(text((int) Math.round(Math.max(x1, BAR_LEFT + w)) + 6, y - 5, 11, "normal", "start",
                        String.format(Locale.ROOT, "%.1f ms", st.medianNanos() / 1e6)));
            }
            y += 10;
        }
        int height = y + 30;
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                + " font-family=\"sans-serif\">%n", WIDTH, height, WIDTH, height));
        b.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, height));
        for (int i = 0; i < head.size(); i++) {
            b.append(text(10, 18 + 15 * i, 12, "bold", "start", head.get(i)));
        }
        b.append(text(10, top + 18, 11, "normal", "start", "Bars: median execution time (shorter is faster); whiskers: fastest to slowest"
                + " counted run; each case on its own scale."));
        int lx = 10;
        for (String[] l : new String[][] {{METHOD, "io_method"}, {JAVA, "Java baseline"}, {FIO, "fio baseline"}}) {
            b.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"10\" fill=\"%s\"/>%n", lx, top + 25,
                    l[0]));
            b.append(text(lx + 16, top + 34, 11, "normal", "start", l[1]));
            lx += 130;
        }
        b.append(body);
        b.append(text(10, height - 10, 10, "normal", "start", "pageio drill; " + r.fio()));
        return b.append("</svg>\n").toString();
    }

    /** Splits {@code s} at spaces into lines of at most {@code width} characters (a longer word stays whole). */
    static List<String> wrap(String s, int width) {
        List<String> out = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String w : s.split(" ")) {
            if (!line.isEmpty() && line.length() + 1 + w.length() > width) {
                out.add(line.toString());
                line.setLength(0);
            }
            line.append(line.isEmpty() ? "" : " ").append(w);
        }
        out.add(line.toString());
        return out;
    }

    private static String text(int x, int y, int size, String weight, String anchor, String s) {
        return String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" font-weight=\"%s\" text-anchor=\"%s\">%s</text>%n",
                x, y, size, weight, anchor, esc(s));
    }

    static String esc(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '&' -> b.append("&amp;");
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '"' -> b.append("&quot;");
                default -> {
                    if (ch >= 0x20 || ch == '\t') {
                        b.append(ch);
                    }
                }
            }
        }
        return b.toString();
    }
}
