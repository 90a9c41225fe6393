package org.pageio.measure.drill;

import java.io.PrintStream;
import java.util.function.Consumer;

/**
 * Where the drill says what it is doing. {@link #line} is a line to keep (a run's result, a
 * loaded table); {@link #status} is a transient state (load progress, the run in progress) that
 * a terminal shows on one live line, overwritten by the next. Called from the drill's thread only.
 */
public interface DrillProgress {

    /** A line to keep. */
    void line(String text);

    /** A transient status; by default dropped. */
    default void status(String text) {
    }

    /** Lines only, to {@code sink} (tests, logs). */
    static DrillProgress lines(Consumer<String> sink) {
        return sink::accept;
    }

    /**
     * To a stream: on a terminal ({@code tty}) a live status line rewritten with {@code \r} and
     * erased before each kept line; otherwise only kept lines, and status lines at most every
     * {@code plainEveryNanos} (so a log still shows a long load moving).
     */
    static DrillProgress to(PrintStream out, boolean tty, long plainEveryNanos) {
        return new DrillProgress() {
            private boolean live;
            private long nextPlain;

            @Override
            public void line(String text) {
                if (live) {
                    out.print("\r\033[K");
                    live = false;
                }
                out.println(text);
                out.flush();
            }

            @Override
            public void status(String text) {
                if (tty) {
                    out.print("\r\033[K" + text);
                    out.flush();
                    live = true;
                } else {
                    long now = System.nanoTime();
                    if (now - nextPlain >= 0) {
                        nextPlain = now + plainEveryNanos;
                        out.println(text);
                        out.flush();
                    }
                }
            }
        };
    }
}
