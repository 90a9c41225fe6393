package org.pageio.shell;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.bufmgr.BufferManager;
import org.pageio.pgdata.PgChecksums;
import org.pageio.pgdata.PgDataException;
import org.pageio.pgdata.PgCommands;
import org.pageio.report.TextTable;
import org.pageio.shell.command.Commands;
import org.pageio.table.BadBlock;
import org.pageio.table.ScanReport;
import org.pageio.table.ScanRequest;
import org.pageio.table.ScanSettings;
import org.pageio.table.TableService;

/**
 * {@code pageio:verify}: the checksum verifications, which fail (a Gogo error: {@code ./pageio exec}
 * and {@code ./pageio verify} exit 1) when they find a damaged page, as {@code pg_checksums --check}
 * exits 1.
 * <ul>
 *   <li>{@code pageio:verify TABLE}: every page of a pageio table and its indexes, header and
 *       checksum, read as stored (the table service's checksum scan; {@code zero_damaged_pages} and
 *       {@code ignore_checksum_failure} do not apply to it). Damage prints the report, then fails.</li>
 *   <li>{@code pageio:verify --pgdata DIR [--progress] [--jobs N]}: {@code pg_checksums --check} on a
 *       stopped PostgreSQL cluster ({@link PgChecksums}), its pages read through a pool of its own on the
 *       buffer manager's bound {@code io_method} with its read-stream settings, N files at once (one per
 *       processor unless told); each bad block is a
 *       line on stderr as pg_checksums prints it ({@code pg_checksums: error: checksum verification
 *       failed in file …}), progress with {@code --progress} on stderr ({@code N/M MB (P%) computed}),
 *       then pg_checksums' summary; a refusal ({@code cluster must be shut down}, …) fails with
 *       pg_checksums' message.</li>
 * </ul>
 * Gogo's thread; nothing kept between calls.
 */
@Component(service = VerifyCommand.class, property = {
        Commands.SCOPE + "=" + Commands.PAGEIO,
        Commands.FUNCTION + "=verify"
})
public final class VerifyCommand {


    private final TableService tables;
    private final BufferManager bufmgr;

    @Activate
    public VerifyCommand(@Reference TableService tables, @Reference BufferManager bufmgr) {
        this.tables = tables;
        this.bufmgr = bufmgr;
    }

    @Descriptor("checks every page checksum and header of a table and its indexes, or of a stopped PostgreSQL cluster"
            + " (--pgdata, like pg_checksums --check); fails when a page is damaged")
    public String verify(
            @Descriptor("settings, e.g. maintenance_io_concurrency=32 (a table)") @Parameter(names = {"--set"}, absentValue = "")
            String set,
            @Descriptor("output format: text (default) or json (a table)") @Parameter(names = {"-f", "--format"},
                    absentValue = "text") String format,
            @Descriptor("a stopped PostgreSQL cluster's data directory, instead of a table") @Parameter(names = {"-D", "--pgdata"},
                    absentValue = "") String pgdata,
            @Descriptor("progress on stderr, like pg_checksums -P (--pgdata)") @Parameter(names = {"-P", "--progress"},
                    presentValue = "true", absentValue = "false") boolean progress,
            @Descriptor("files verified at once, each on a thread and session of its own (--pgdata; default: the processors)")
            @Parameter(names = {"-j", "--jobs"}, absentValue = "0") int jobs,
            @Descriptor("table (none with --pgdata)") String... table) throws IOException {
        if (!format.equals("text") && !format.equals("json")) {
            throw new IllegalArgumentException("pageio:verify: unknown format '" + format + "': use text or json");
        }
        if (!pgdata.isEmpty()) {
            if (table.length > 0) {
                throw new IllegalArgumentException("pageio:verify: --pgdata verifies a whole cluster; no table with it (got "
                        + String.join(" ", table) + ")");
            }
            if (jobs < 0 || jobs > PgCommands.MAX_JOBS) {
                throw new IllegalArgumentException("pageio:verify: --jobs " + jobs + " is out of range: 1.." + PgCommands.MAX_JOBS
                        + " files at once (0 or none: one per processor)");
            }
            return cluster(Path.of(pgdata), progress, jobs > 0 ? jobs : Runtime.getRuntime().availableProcessors());
        }
        if (table.length != 1) {
            throw new IllegalArgumentException("pageio:verify: takes one table, or --pgdata DIR; usage: pageio:verify [--set k=v,…]"
                    + " [--format text|json] TABLE | pageio:verify --pgdata DIR [--progress] [--jobs N]");
        }
        return table(table[0], set, format);
    }

    private String table(String table, String set, String format) throws IOException {
        ScanReport r = tables.scan(ScanRequest.checksums(table).with(ScanSettings.parse(set)));
        TextTable t = new TextTable("relation", "block", "problem").alignRight(1);
        for (BadBlock b : r.badBlocks()) {
            t.row(b.relation(), b.block(), b.message());
        }
        String head = String.format(Locale.ROOT, "Checksum scan of %s: %,d blocks checked, bad checksums or headers: %d (%.1f ms)",
                table, r.count(), r.badBlocks().size(), r.executionNanos() / 1e6);
        String report = format.equals("json") ? t.toJson().stripTrailing()
                : r.badBlocks().isEmpty() ? head : head + "\n" + t.toString().stripTrailing();
        if (r.badBlocks().isEmpty()) {
            return report;
        }
        System.out.println(report);
        throw new IllegalStateException("pageio:verify: " + table + " has " + r.badBlocks().size()
                + " damaged block(s) (bad checksums or headers, listed above)");
    }

    private String cluster(Path dir, boolean progress, int jobs) throws IOException {
        try {
            PgChecksums.Result r = PgCommands.verify(dir, bufmgr.pool().method(), bufmgr.settings(), jobs, progress, System.err);
            if (r.badChecksums() > 0) {
                System.out.println(r.summary());
                throw new IllegalStateException("pg_checksums: error: " + r.badChecksums() + " bad checksum(s) in cluster \"" + dir
                        + "\" (listed above)");
            }
            return r.summary();
        } catch (PgDataException e) {
            throw new IllegalStateException("pg_checksums: error: " + e.getMessage(), e);
        }
    }
}
