package org.pageio.shell;

import java.time.Instant;
import java.time.ZoneId;

import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.stats.StatIo;
import org.pageio.report.Json;
import org.pageio.report.StatViews;
import org.pageio.report.TextTable;
import org.pageio.shell.command.Commands;

/**
 * {@code pageio:stat_io [--reset] [--object O] [--context C]} (PostgreSQL's {@code pg_stat_io}, plus
 * the I/O method and bytes per read; {@code --reset} is {@code pg_stat_reset_shared('io')}) and
 * {@code pageio:aios} ({@code pg_aios}) over the running {@link BufferManager}. The reference is
 * optional and dynamic, so while the buffer manager restarts (a settings change) the commands stay
 * and say so in one line. Counters live in the pool: a restart of the buffer manager starts them
 * at zero.
 */
@Component(service = StatsCommands.class, property = {
        Commands.SCOPE + "=" + Commands.PAGEIO,
        Commands.FUNCTION + "=stat_io",
        Commands.FUNCTION + "=aios"
})
public final class StatsCommands {

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile BufferManager bufmgr;

    /** For Declarative Services: the buffer manager is bound later. */
    public StatsCommands() {
    }

    /** Over {@code bufmgr}, outside a container (tests). */
    StatsCommands(BufferManager bufmgr) {
        this.bufmgr = bufmgr;
    }

    @Descriptor("I/O counters by backend type, object, context and I/O method, like pg_stat_io (times in ms),"
            + " with bytes per read")
    public String stat_io(
            @Descriptor("zero the counters instead of listing them, like pg_stat_reset_shared('io'); with --object or"
                    + " --context only those rows (pageio's); prints when, not the counters")
            @Parameter(names = {"-r", "--reset"}, presentValue = "true", absentValue = "false") boolean reset,
            @Descriptor("only the rows of this object: relation or 'temp relation'")
            @Parameter(names = {"-o", "--object"}, absentValue = "") String object,
            @Descriptor("only the rows of this context: normal, bulkread, bulkwrite or vacuum")
            @Parameter(names = {"-c", "--context"}, absentValue = "") String context,
            @Descriptor("output format: text (default) or json")
            @Parameter(names = {"-f", "--format"}, absentValue = "text") String format) {
        boolean json = Json.requested(format);
        StatIo.IoObject o = object.isEmpty() ? null : StatIo.IoObject.of(object); // refused before anything changes
        StatIo.IoContext c = context.isEmpty() ? null : StatIo.IoContext.of(context);
        StatIo stats = bufferManager().pool().stats();
        if (reset) {
            return resetOutcome(stats.reset(o, c), o, c, json);
        }
        TextTable t = StatViews.statIoTable(stats.rows().stream()
                .filter(r -> (o == null || r.object() == o) && (c == null || r.context() == c)).toList());
        return json ? t.toJson().stripTrailing() : t.toString().stripTrailing();
    }

    /**
     * What {@code --reset} prints: which rows, and their new {@code stats_reset}
     * ({@code pg_stat_reset_shared} itself returns nothing).
     */
    static String resetOutcome(Instant at, StatIo.IoObject o, StatIo.IoContext c, boolean json) {
        String when = StatIo.timestamptz(at, ZoneId.systemDefault());
        if (json) {
            return Json.inline(g -> {
                g.writeStartObject();
                g.writeStringField("reset", "io");
                if (o == null) {
                    g.writeNullField("object");
                } else {
                    g.writeStringField("object", o.label);
                }
                if (c == null) {
                    g.writeNullField("context");
                } else {
                    g.writeStringField("context", c.label);
                }
                g.writeStringField("stats_reset", when);
                g.writeEndObject();
            }).stripTrailing();
        }
        String which = o == null && c == null ? "every row"
                : "the rows of " + (o == null ? "" : "object " + o.label + (c == null ? "" : ", "))
                        + (c == null ? "" : "context " + c.label);
        return "stat_io reset: " + which + ", stats_reset " + when;
    }

    @Descriptor("the AIO handles in use now, like pg_aios (rows exist only while I/O is in flight)")
    public String aios(
            @Descriptor("output format: text (default) or json")
            @Parameter(names = {"-f", "--format"}, absentValue = "text") String format) {
        boolean json = Json.requested(format);
        TextTable t = StatViews.aiosTable(bufferManager().pool().aio().snapshot());
        return json ? t.toJson().stripTrailing() : t.toString().stripTrailing();
    }

    private BufferManager bufferManager() {
        BufferManager b = bufmgr;
        if (b == null) {
            throw new IllegalStateException("the buffer manager is not running (see pageio:methods and pageio:settings)");
        }
        return b;
    }
}
