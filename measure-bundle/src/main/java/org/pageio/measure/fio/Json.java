package org.pageio.measure.fio;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Just enough of a JSON reader for fio's output: objects as maps, arrays as lists, strings, and
 * every other value (numbers, true, false, null, fio's occasional {@code -nan}) as its text.
 * Lenient about those bare values, strict about structure. Stateless.
 */
final class Json {

    private final String s;
    private int i;

    private Json(String s, int start) {
        this.s = s;
        this.i = start;
    }

    /** The value starting at the first '{' of {@code text} (fio may print notes before it). */
    static Object parse(String text) {
        int start = text.indexOf('{');
        if (start < 0) {
            throw new IllegalArgumentException("no JSON object in fio's output");
        }
        return new Json(text, start).value();
    }

    private Object value() {
        skip();
        if (i >= s.length()) {
            throw error("a value");
        }
        char c = s.charAt(i);
        if (c == '{') {
            i++;
            Map<String, Object> m = new LinkedHashMap<>();
            skip();
            if (peek('}')) {
                return m;
            }
            do {
                skip();
                String k = string();
                skip();
                expect(':');
                m.put(k, value());
                skip();
            } while (accept(','));
            expect('}');
            return m;
        }
        if (c == '[') {
            i++;
            List<Object> l = new ArrayList<>();
            skip();
            if (peek(']')) {
                return l;
            }
            do {
                l.add(value());
                skip();
            } while (accept(','));
            expect(']');
            return l;
        }
        if (c == '"') {
            return string();
        }
        int start = i;
        while (i < s.length() && ",}] \t\r\n".indexOf(s.charAt(i)) < 0) {
            i++;
        }
        if (start == i) {
            throw error("a value");
        }
        return new Bare(s.substring(start, i));
    }

    /** A value that is not a string, an object or an array: its text. */
    record Bare(String text) {
    }

    private String string() {
        expect('"');
        StringBuilder b = new StringBuilder();
        while (i < s.length() && s.charAt(i) != '"') {
            char c = s.charAt(i++);
            if (c == '\\' && i < s.length()) {
                char e = s.charAt(i++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 't' -> b.append('\t');
                    case 'r' -> b.append('\r');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> b.append(e);
                }
            } else {
                b.append(c);
            }
        }
        expect('"');
        return b.toString();
    }

    private void skip() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
    }

    private boolean peek(char c) {
        if (i < s.length() && s.charAt(i) == c) {
            i++;
            return true;
        }
        return false;
    }

    private boolean accept(char c) {
        return peek(c);
    }

    private void expect(char c) {
        if (!peek(c)) {
            throw error("'" + c + "'");
        }
    }

    private IllegalArgumentException error(String wanted) {
        return new IllegalArgumentException("fio's output is not JSON: expected " + wanted + " at character " + i);
    }
}
