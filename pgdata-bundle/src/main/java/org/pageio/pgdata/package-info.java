/**
 * PostgreSQL's own files: a stopped cluster opened read-only ({@link org.pageio.pgdata.PgCluster}:
 * {@code global/pg_control} as {@link org.pageio.pgdata.ControlFile}, its relation files as
 * {@code pg_checksums} finds them, a relation by the path {@code pg_relation_filepath()} prints),
 * read through the buffer manager's read streams, and {@code pg_checksums --check} on it
 * ({@link org.pageio.pgdata.PgChecksums}). PostgreSQL 15 to 18, 8 KiB blocks, little-endian files.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.pageio.pgdata;
