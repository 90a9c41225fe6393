package org.pageio.pgdata;

import java.io.IOException;

/**
 * A PostgreSQL cluster pageio refuses to read, or a file it cannot read: the message is
 * {@code pg_checksums}' own where it has one ({@code cluster must be shut down}, {@code data
 * checksums are not enabled in cluster}, {@code pg_control CRC value is incorrect}), followed by
 * what pageio found (the file, the state). pg_checksums exits 1 on each of them.
 */
public final class PgDataException extends IOException {

    private static final long serialVersionUID = 1L;

    public PgDataException(String message) {
        super(message);
    }
}
