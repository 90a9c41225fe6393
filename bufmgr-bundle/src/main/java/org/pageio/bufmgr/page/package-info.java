/**
 * The 8 KiB page as PostgreSQL lays it out ({@code bufpage.h}): the 24-byte header, its checksum,
 * its verification and its initialisation.
 *
 * <ul>
 *   <li>{@link org.pageio.bufmgr.page.Page}: layout constants, header accessors, {@code init},
 *       the checksum (CRC32C with the block number mixed in, 16 bits, never 0).</li>
 *   <li>{@link org.pageio.bufmgr.page.PageVerifier}: {@code PageIsVerified}, called by the buffer
 *       manager's read-completion callback on every page read (any thread; no allocation, no
 *       exception) and by maintenance scans; {@code describe} explains a failure.</li>
 *   <li>{@link org.pageio.bufmgr.page.PgChecksum} (1.1.0): PostgreSQL's own page checksum,
 *       {@code pg_checksum_page}, for pages PostgreSQL wrote.</li>
 * </ul>
 *
 * Everything is static and stateless, safe from any thread. Exported so that the table bundle
 * writes heap pages with the same code the buffer manager verifies them with.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.pageio.bufmgr.page;
