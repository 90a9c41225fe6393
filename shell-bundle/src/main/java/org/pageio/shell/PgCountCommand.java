package org.pageio.shell;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.bufmgr.BufferManager;
import org.pageio.pgdata.PgDataException;
import org.pageio.pgdata.PgCommands;
import org.pageio.shell.command.Commands;

/**
 * {@code pageio:pgcount --pgdata DIR RELPATH}: {@code SELECT count(*)} of a heap in a stopped
 * PostgreSQL cluster, with PostgreSQL's tuple visibility for a snapshot that sees every committed
 * transaction (pgdata-bundle's {@link org.pageio.pgdata.PgHeapScan}, over {@code pg_xact}), and the heap's
 * {@code pg_visibility_map_summary} ({@link org.pageio.pgdata.PgVisibilityMap}; both run by {@link PgCommands#count}). {@code RELPATH} is what
 * {@code pg_relation_filepath('t')} prints ({@code base/5/16384}). The pages are read through a pool
 * of the command's own on the buffer manager's bound {@code io_method} with its read-stream settings,
 * read-only. A refusal (a cluster not shut down, an updating multixact, a damaged page) fails the
 * command with its message. Gogo's thread; nothing kept between calls.
 */
@Component(service = PgCountCommand.class, property = {
        Commands.SCOPE + "=" + Commands.PAGEIO,
        Commands.FUNCTION + "=pgcount"
})
public final class PgCountCommand {

    private final BufferManager bufmgr;

    @Activate
    public PgCountCommand(@Reference BufferManager bufmgr) {
        this.bufmgr = bufmgr;
    }

    @Descriptor("count(*) of a heap in a stopped PostgreSQL cluster (PostgreSQL's tuple visibility, pg_xact) and its"
            + " pg_visibility_map_summary")
    public String pgcount(
            @Descriptor("a stopped PostgreSQL cluster's data directory") @Parameter(names = {"-D", "--pgdata"}, absentValue = "")
            String pgdata,
            @Descriptor("the heap's file as pg_relation_filepath() prints it, e.g. base/5/16384") String... relpath)
            throws IOException {
        if (pgdata.isEmpty() || relpath.length != 1) {
            throw new IllegalArgumentException("pageio:pgcount: usage: pageio:pgcount --pgdata DIR RELPATH"
                    + " (RELPATH as pg_relation_filepath() prints it, e.g. base/5/16384)");
        }
        try {
            return PgCommands.count(Path.of(pgdata), bufmgr.pool().method(), bufmgr.settings(), relpath[0]);
        } catch (PgDataException | IllegalArgumentException e) {
            throw new IllegalStateException("pageio:pgcount: " + e.getMessage(), e);
        }
    }
}
