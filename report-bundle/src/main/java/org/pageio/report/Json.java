package org.pageio.report;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.PrettyPrinter;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The console's JSON, written with Jackson's streaming {@link JsonGenerator} in one layout:
 * {@code "key": value} pairs separated by {@code ", "}; an array of objects puts each object on
 * a line of its own, indented two spaces per enclosing line-broken container; any other array
 * or object stays on one line, except a root object asked for {@link #lines}, which puts each
 * field on a line. Each call has its own generator; thread-safe.
 */
public final class Json {

    private static final JsonFactory FACTORY = JsonFactory.builder().build();

    /** What writes one JSON value. */
    @FunctionalInterface
    public interface Body {
        void write(JsonGenerator g) throws IOException;
    }

    private Json() {
    }

    /** One value, the root on one line (arrays of objects still one object a line), followed by a newline. */
    public static String inline(Body body) {
        return write(false, body);
    }

    /** One value whose root object has a field a line, followed by a newline. */
    public static String lines(Body body) {
        return write(true, body);
    }

    private static String write(boolean rootLines, Body body) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.setPrettyPrinter(new Layout(rootLines));
            body.write(g);
        } catch (IOException e) {
            throw new UncheckedIOException("writing JSON to a string failed", e); // a StringWriter does not fail
        }
        return out.append('\n').toString();
    }

    /**
     * The layout. A stack of the open containers says which are line-broken: an array becomes so
     * when its first element is an object, the root object when asked.
     */
    private static final class Layout implements PrettyPrinter {
        private final boolean rootLines;
        /** One entry per open container: whether it is line-broken. */
        private final Deque<Boolean> open = new ArrayDeque<>();
        private int broken;

        Layout(boolean rootLines) {
            this.rootLines = rootLines;
        }

        private void newline(JsonGenerator g, int depth) throws IOException {
            g.writeRaw('\n');
            for (int i = 0; i < depth; i++) {
                g.writeRaw("  ");
            }
        }

        private void push(boolean lines) {
            open.push(lines);
            if (lines) {
                broken++;
            }
        }

        private boolean pop() {
            boolean lines = open.pop();
            if (lines) {
                broken--;
            }
            return lines;
        }

        @Override
        public void writeRootValueSeparator(JsonGenerator g) throws IOException {
            g.writeRaw('\n');
        }

        @Override
        public void writeStartObject(JsonGenerator g) throws IOException {
            var parent = g.getOutputContext().getParent();
            if (parent != null && parent.inArray() && parent.getCurrentIndex() == 0 && !open.isEmpty() && !open.peek()) {
                // the first element of an array is an object: the array becomes line-broken
                open.pop();
                push(true);
            }
            if (parent != null && parent.inArray() && !open.isEmpty() && open.peek()) {
                newline(g, broken);
            }
            g.writeRaw('{');
            push(rootLines && parent != null && parent.inRoot());
        }

        @Override
        public void writeEndObject(JsonGenerator g, int entries) throws IOException {
            if (pop() && entries > 0) {
                newline(g, broken);
            }
            g.writeRaw('}');
        }

        @Override
        public void writeObjectEntrySeparator(JsonGenerator g) throws IOException {
            if (open.peek()) {
                g.writeRaw(',');
                newline(g, broken);
            } else {
                g.writeRaw(", ");
            }
        }

        @Override
        public void writeObjectFieldValueSeparator(JsonGenerator g) throws IOException {
            g.writeRaw(": ");
        }

        @Override
        public void writeStartArray(JsonGenerator g) throws IOException {
            g.writeRaw('[');
            push(false);
        }

        @Override
        public void writeEndArray(JsonGenerator g, int values) throws IOException {
            if (pop()) {
                newline(g, broken);
            }
            g.writeRaw(']');
        }

        @Override
        public void writeArrayValueSeparator(JsonGenerator g) throws IOException {
            g.writeRaw(open.peek() ? "," : ", ");
        }

        @Override
        public void beforeArrayValues(JsonGenerator g) {
        }

        @Override
        public void beforeObjectEntries(JsonGenerator g) throws IOException {
            if (open.peek()) {
                newline(g, broken);
            }
        }
    }

    /**
     * A listing command's {@code --format}: true for {@code json}, false for {@code text} (either
     * case); any other value is refused naming the two, before the command changes anything.
     */
    public static boolean requested(String format) {
        return switch (format.toLowerCase(java.util.Locale.ROOT)) {
            case "text" -> false;
            case "json" -> true;
            default -> throw new IllegalArgumentException("unknown format '" + format + "': use text or json");
        };
    }
}
