package org.pageio.bufmgr.smgr;

/**
 * What the buffer manager's read completion ({@code shared_buffer_readv}) checks on each page it
 * read from a storage manager's files, before the buffer becomes valid: a property of the files'
 * source, so one pool reads one kind of page.
 *
 * @since 1.6.0
 */
public enum ReadVerification {
    /**
     * pageio's pages: {@code PageIsVerified}'s header rules and, with data checksums on, pageio's
     * checksum ({@code PageVerifier.verify}); a damaged page fails its read, or is zeroed
     * ({@code zero_damaged_pages}) or used ({@code ignore_checksum_failure}).
     */
    PAGEIO,
    /**
     * Nothing is checked: every page enters shared buffers as it is in the file, damaged or not, and
     * {@code zero_damaged_pages} and {@code ignore_checksum_failure} do not apply. For files of
     * another format whose reader checks each page itself, as a verification of a PostgreSQL
     * cluster computes PostgreSQL's checksum ({@code pg_checksum_page}) on what it was given.
     */
    NONE
}
