package org.pageio.uring;

import org.pageio.api.IoMethod;

/**
 * What {@link IoUring#probe()} found: whether rings can be created here and, when they cannot,
 * why and what to do (Netty's {@code IoUring.isAvailable()/unavailabilityCause()}, as data).
 * Immutable; any thread.
 *
 * @param available whether a ring was created and supports every operation pageio submits
 * @param errno     the error number of the failed call, 0 when available (or when an operation is missing)
 * @param cause     for a person: the failed call, the errno by name, the likely cause and the fix;
 *                  {@code null} when available
 * @param features  the ring's {@code IORING_FEAT_*} bits, 0 when no ring was created
 */
public record IoUringProbe(boolean available, int errno, String cause, int features) {

    /** The availability an {@link IoMethod} reports for this result. */
    public IoMethod.Availability availability() {
        return available ? IoMethod.Availability.AVAILABLE : IoMethod.Availability.unavailable(cause);
    }
}
