/**
 * PostgreSQL's own files: a stopped cluster opened read-only ({@link org.pageio.pgdata.PgCluster}:
 * {@code global/pg_control} as {@link org.pageio.pgdata.ControlFile}, its relation files as
 * {@code pg_checksums} finds them, a relation by the path {@code pg_relation_filepath()} prints),
 * read through the buffer manager's read streams; {@code pg_checksums --check} on it
 * ({@link org.pageio.pgdata.PgChecksums}); a heap's {@code count(*)} with PostgreSQL's tuple
 * visibility ({@link org.pageio.pgdata.PgHeapScan}, over {@code pg_xact}: {@link org.pageio.pgdata.CommitLog})
 * and its visibility map's summary ({@link org.pageio.pgdata.PgVisibilityMap}). PostgreSQL 15 to 18,
 * 8 KiB blocks, little-endian files.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.2.0")
package org.pageio.pgdata;
