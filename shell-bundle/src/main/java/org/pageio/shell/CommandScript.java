package org.pageio.shell;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a {@code pageio.exec} script into Gogo commands at {@code ;} and line breaks that are
 * outside quotes ({@code '…'}, {@code "…"}), brackets ({@code {…}}, {@code […]}, {@code (…)}) and
 * after no backslash, so that Gogo closures and quoted arguments stay whole. Blank commands and
 * lines starting with {@code #} are dropped.
 */
final class CommandScript {

    private CommandScript() {
    }

    static List<String> split(String script) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        char quote = 0;
        int depth = 0;
        for (int i = 0; i < script.length(); i++) {
            char c = script.charAt(i);
            if (c == '\\' && i + 1 < script.length()) {
                cur.append(c).append(script.charAt(++i));
                continue;
            }
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                }
                cur.append(c);
                continue;
            }
            switch (c) {
                case '\'', '"' -> {
                    quote = c;
                    cur.append(c);
                }
                case '{', '[', '(' -> {
                    depth++;
                    cur.append(c);
                }
                case '}', ']', ')' -> {
                    depth = Math.max(0, depth - 1);
                    cur.append(c);
                }
                case ';', '\n', '\r' -> {
                    if (depth > 0) {
                        cur.append(c);
                    } else {
                        add(out, cur);
                    }
                }
                default -> cur.append(c);
            }
        }
        add(out, cur);
        return out;
    }

    private static void add(List<String> out, StringBuilder cur) {
        String s = cur.toString().strip();
        cur.setLength(0);
        if (!s.isEmpty() && !s.startsWith("#")) {
            out.add(s);
        }
    }
}
