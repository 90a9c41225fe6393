package org.pageio.api;

import java.util.concurrent.TimeUnit;

/**
 * What one method swap did ({@link AioContext#swapMethod}, {@link AioContext#retireMethod}).
 *
 * @param from          the method before ({@code null}: none was bound)
 * @param to            the method after ({@code null}: none; sessions wait at the gate)
 * @param epoch         the method epoch after the swap
 * @param pauseNanos    how long the gate was closed (no session could start I/O)
 * @param sessionsWaitedFor sessions that were in a batch when the gate closed, and were waited for
 * @param iosDrained    I/Os of the old method that were in flight when the gate closed
 * @param stuck         what had not finished when a retiring method's timeout ran out, else {@code null}
 */
public record MethodSwap(String from, String to, long epoch, long pauseNanos, int sessionsWaitedFor, int iosDrained,
        String stuck) {

    /** Whether the method changed (false when {@code to} was already bound). */
    public boolean changed() {
        return pauseNanos != 0 || !java.util.Objects.equals(from, to);
    }

    public double pauseMillis() {
        return pauseNanos / (double) TimeUnit.MILLISECONDS.toNanos(1);
    }

    @Override
    public String toString() {
        return "io_method " + (from == null ? "none" : from) + " -> " + (to == null ? "none" : to) + " (epoch " + epoch
                + "): gate closed " + String.format(java.util.Locale.ROOT, "%.3f", pauseMillis()) + " ms, waited for "
                + sessionsWaitedFor + " session(s), drained " + iosDrained + " I/O(s)" + (stuck == null ? "" : "; " + stuck);
    }
}
