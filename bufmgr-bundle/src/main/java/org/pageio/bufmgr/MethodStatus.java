package org.pageio.bufmgr;

import org.pageio.api.MethodSwap;

/**
 * The buffer manager's I/O method binding, as {@code pageio:swap}, the settings view and JMX show
 * it. Immutable.
 *
 * @param method        the method reads go to now; {@code null} while none is bound (reads wait)
 * @param wanted        what {@code io_method} asks for (the {@code ioMethod.target} filter's name)
 * @param fallback      {@code io_method_fallback} ({@code ""}: none)
 * @param usingFallback the bound method is the fallback, because the wanted one is not registered
 * @param epoch         the method epoch (one more per swap since the buffer manager started)
 * @param waiting       why reads wait (no method bound), else {@code null}
 * @param lastSwap      the last swap, or {@code null} when there was none
 * @param lastFailure   the last swap that failed (timeout, unavailable method) or the last configuration
 *                      refused (a value out of range written straight into ConfigAdmin), with why, or {@code null}
 * @param swaps         swaps done since the buffer manager started (from one method to another, or to none; binding
 *                      when none was bound is not one)
 * @param failures      swaps that failed since the buffer manager started
 */
public record MethodStatus(String method, String wanted, String fallback, boolean usingFallback, long epoch,
        String waiting, MethodSwap lastSwap, String lastFailure, long swaps, long failures) {
}
