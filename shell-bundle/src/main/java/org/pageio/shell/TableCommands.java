package org.pageio.shell;

import java.io.IOException;
import java.io.PrintStream;
import java.util.Locale;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.table.IndexInfo;
import org.pageio.table.LoadResult;
import org.pageio.table.LoadSink;
import org.pageio.table.RowFilter;
import org.pageio.table.ScanReport;
import org.pageio.table.ScanRequest;
import org.pageio.table.ScanSettings;
import org.pageio.table.SetClause;
import org.pageio.table.TableInfo;
import org.pageio.table.TableService;
import org.pageio.table.TableShape;
import org.pageio.report.TextTable;
import org.pageio.shell.command.CommandUsage;
import org.pageio.shell.command.Commands;

/**
 * Gogo commands for tables (scope {@code pageio}): {@code load}, {@code index}, {@code scan},
 * {@code explain}, {@code tables}, {@code drop}, {@code delete}, {@code update}, {@code vacuum}. Errors are one line (a
 * {@link IOException} or {@link IllegalArgumentException} message naming table, relation and
 * block), never only a stack trace.
 */
@Component(service = TableCommands.class, property = {
        Commands.SCOPE + "=" + Commands.PAGEIO,
        Commands.FUNCTION + "=load",
        Commands.FUNCTION + "=index",
        Commands.FUNCTION + "=scan",
        Commands.FUNCTION + "=explain",
        Commands.FUNCTION + "=tables",
        Commands.FUNCTION + "=drop",
        Commands.FUNCTION + "=delete",
        Commands.FUNCTION + "=update",
        Commands.FUNCTION + "=vacuum"
})
public final class TableCommands {

    /** {@code pageio:load}'s usage line, in a refusal of a numeric option. */
    static final CommandUsage LOAD = new CommandUsage("pageio:load",
            "pageio:load [--shape t|prefetch_test] [--rows N] [--seed N] [--sink bulk|direct|buffered] NAME");

    private final TableService tables;

    @org.osgi.service.component.annotations.Activate
    public TableCommands(@Reference TableService tables) {
        this.tables = tables;
    }

    @Descriptor("creates a table from a generator: shape t (id bigint, pad text) or prefetch_test (id, cat, val int, payload text)")
    public String load(
            @Descriptor("generator shape: t or prefetch_test (default: the table's name)")
            @Parameter(names = {"-s", "--shape"}, absentValue = "") String shape,
            @Descriptor("rows, 1 or more (default: 8000000 for t, 2000000 for prefetch_test)")
            @Parameter(names = {"-r", "--rows"}, absentValue = "") String rowsText,
            @Descriptor("random seed, a whole number (default 1)")
            @Parameter(names = {"--seed"}, absentValue = "1") String seedText,
            @Descriptor("where the pages go: bulk (asynchronous writes through io_method, the default), direct (O_DIRECT"
                    + " writer thread) or buffered")
            @Parameter(names = {"--sink"}, absentValue = "") String sink,
            @Descriptor("table name, [a-z_][a-z0-9_]*") String name) throws IOException {
        // refused before anything is created: a bad --rows must not fall back to the 1.9 GB default
        long rows = rowsText.isEmpty() ? 0 : LOAD.whole("--rows", "rows", rowsText, 1, Long.MAX_VALUE);
        long seed = LOAD.whole("--seed", "", seedText, Long.MIN_VALUE, Long.MAX_VALUE);
        TableShape s = TableShape.byName(shape.isEmpty() ? name : shape);
        LoadSink how = sink.isEmpty() ? LoadSink.DEFAULT : LoadSink.parse(sink);
        PrintStream out = System.out;
        boolean tty = System.console() != null;
        LoadResult r = tables.load(name, s, rows, seed, how, (done, total, bytes, nanos) -> {
            if (!tty) {
                return;
            }
            double sec = nanos / 1e9;
            double mbs = sec == 0 ? 0 : bytes / 1e6 / sec;
            double eta = done == 0 ? 0 : sec * (total - done) / done;
            out.printf(Locale.ROOT, "\r%s: %,d / %,d rows  %.0f MB/s  ETA %.1f s   ", name, done, total, mbs, eta);
            out.flush();
        });
        if (tty) {
            out.println();
        }
        return r + " (" + how.label() + " sink)";
    }

    @Descriptor("builds the ordered index on an integer column, or on two (COL1,COL2: keys compared in that order),"
            + " replacing an existing one on the same columns")
    public String index(@Descriptor("table") String table, @Descriptor("integer column, or two: cat,val") String column)
            throws IOException {
        long t0 = System.nanoTime();
        IndexInfo i = tables.createIndex(table, column);
        return String.format(Locale.ROOT, "created index %s on %s %s: %,d entries, %,d blocks, height %d, in %.2f s", i.name(),
                table, i.columnList(), i.entries(), i.blocks(), i.height(), (System.nanoTime() - t0) / 1e9);
    }

    @Descriptor("runs a scan and prints its answer: count T | filter T COLUMN '%PAT%' (quoted) | bitmap T COL LO HI | index T COL LO HI"
            + " | limit T COL LO N | ios T COL LO HI | ios T 'COL1 = X' COL2 LO HI (index-only scan; the second form over"
            + " an index on (COL1, COL2), e.g. ios p 'cat = 50' val 100 5000) | checksums T")
    public String scan(
            @Descriptor("settings for this scan, like SET: effective_io_concurrency=N,io_combine_limit=N,"
                    + "read_stream_lookahead=pg18|pg19,track_io_timing=on,scan_sets_visibility_map=on|off")
            @Parameter(names = {"--set"}, absentValue = "") String set,
            @Descriptor("the scan and its arguments") String... scan) throws IOException {
        return tables.scan(ScanRequest.parse(scan).with(ScanSettings.parse(set))).summary();
    }

    @Descriptor("EXPLAIN [ANALYZE] [BUFFERS] [IO] of a scan, in PostgreSQL's layout or JSON")
    public String explain(
            @Descriptor("run the scan and show actual figures") @Parameter(names = {"-a", "--analyze"}, presentValue = "true",
                    absentValue = "false") boolean analyze,
            @Descriptor("show Buffers and I/O Timings") @Parameter(names = {"-b", "--buffers"}, presentValue = "true",
                    absentValue = "false") boolean buffers,
            @Descriptor("show PostgreSQL 19's Prefetch and I/O lines") @Parameter(names = {"-i", "--io"}, presentValue = "true",
                    absentValue = "false") boolean io,
            @Descriptor("text (default) or json") @Parameter(names = {"-f", "--format"}, absentValue = "text") String format,
            @Descriptor("settings for this scan, like SET (see scan)") @Parameter(names = {"--set"}, absentValue = "") String set,
            @Descriptor("the scan and its arguments (see scan)") String... scan) throws IOException {
        if (!format.equals("text") && !format.equals("json")) {
            throw new IllegalArgumentException("unknown format '" + format + "': use text or json");
        }
        if (io && !analyze) {
            throw new IllegalArgumentException("EXPLAIN option IO requires ANALYZE");
        }
        ScanRequest req = ScanRequest.parse(scan).with(ScanSettings.parse(set));
        // without ANALYZE, as in PostgreSQL, nothing runs: the plan's shape only
        ScanReport r = analyze ? tables.scan(req) : tables.plan(req);
        return r.explain(analyze, buffers, io, format);
    }

    @Descriptor("lists the tables of the catalog")
    public String tables(@Descriptor("text (default) or json") @Parameter(names = {"-f", "--format"}, absentValue = "text")
            String format) throws IOException {
        TextTable t = new TextTable("table", "shape", "relation", "rows", "n_live_tup", "n_dead_tup", "blocks", "all_visible",
                "all_frozen", "indexes").alignRight(3, 4, 5, 6, 7, 8);
        for (TableInfo i : tables.tables()) {
            // pg_visibility_map_summary's figures: pages the visibility map marks all-visible, all-frozen
            org.pageio.table.VisibilityMapSummary vm = tables.visibilityMapSummary(i.name());
            // pg_stat_user_tables' n_live_tup and n_dead_tup
            org.pageio.table.TupleStats st = tables.tupleStats(i.name());
            t.row(i.name(), i.shape().ddl(i.name()), i.relNumber(), i.rows(), st.nLiveTup(), st.nDeadTup(), i.blocks(),
                    vm.allVisible(), vm.allFrozen(),
                    String.join(", ", i.indexes().stream().map(x -> x.name() + " " + x.columnList() + " " + x.relNumber()).toList()));
        }
        return switch (format) {
            case "text" -> t.toString().stripTrailing();
            case "json" -> t.toJson().stripTrailing();
            default -> throw new IllegalArgumentException("unknown format '" + format + "': use text or json");
        };
    }

    /** {@code pageio:delete}'s usage, printed for {@code --help} and in a refusal. */
    static final String DELETE_USAGE = "usage: pageio:delete TABLE WHERE COL LO HI | WHERE COL = V | WHERE COL LIKE '%substring%'"
            + " | WHERE COL '%' N = R | WHERE 'COL % N = R' | WHERE COL mod N = R (Gogo reads a bare % as an expression: quote it)";

    @Descriptor("DELETE FROM TABLE WHERE …, committed before it returns; prints DELETE n. WHERE COL LO HI (inclusive),"
            + " COL = V, COL LIKE '%substring%', COL '%' N = R or COL mod N = R (quote every %)")
    public String delete(@Descriptor("table") String table,
            @Descriptor("WHERE and the condition") String... where) throws IOException {
        if (table.equals("--help") || table.equals("-h") || java.util.Arrays.asList(where).contains("--help")) {
            return "pageio:delete: deletes the rows a condition selects, in one transaction committed durably before"
                    + " DELETE n is printed\n" + DELETE_USAGE;
        }
        RowFilter f;
        try {
            f = RowFilter.parse(where);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("pageio:delete: " + e.getMessage(), e);
        }
        return "DELETE " + tables.delete(table, f);
    }

    /** {@code pageio:update}'s usage, printed for {@code --help}. */
    static final String UPDATE_USAGE = "usage: pageio:update TABLE SET COL = V | SET COL = COL2 + N | SET COL = COL2 - N"
            + " WHERE … (the forms of pageio:delete)";

    @Descriptor("UPDATE TABLE SET COL = V | COL2 + N WHERE …, committed before it returns; prints UPDATE n. HOT on"
            + " the row's page when it has room and no indexed value changes, else a new version with new index entries")
    public String update(@Descriptor("table") String table,
            @Descriptor("SET COL = expr WHERE and the condition") String... words) throws IOException {
        if (table.equals("--help") || table.equals("-h") || java.util.Arrays.asList(words).contains("--help")) {
            return "pageio:update: sets a column of the rows a condition selects, in one transaction committed durably"
                    + " before UPDATE n is printed; a new row version goes on its row's page when it has room (a"
                    + " heap-only update when no indexed value changes), else on the table's last page or a new one,"
                    + " with an entry in every index\n"
                    + UPDATE_USAGE + "\nwhere: " + RowFilter.USAGE;
        }
        int w = 0;
        while (w < words.length && !words[w].equalsIgnoreCase("where")) {
            w++;
        }
        SetClause set;
        RowFilter f;
        try {
            set = SetClause.parse(java.util.Arrays.copyOfRange(words, 0, w));
            f = RowFilter.parse(java.util.Arrays.copyOfRange(words, w, words.length));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("pageio:update: " + e.getMessage(), e);
        }
        return "UPDATE " + tables.update(table, set, f);
    }

    /** {@code pageio:vacuum}'s usage, printed for {@code --help}. */
    static final String VACUUM_USAGE = "usage: pageio:vacuum [--freeze] [--verbose] [--buffer-usage-limit 0|128kB..16GB]"
            + " [--set maintenance_io_concurrency=N,io_combine_limit=N,track_io_timing=on] TABLE";

    @Descriptor("VACUUM [FREEZE] [VERBOSE] TABLE: prunes dead rows, removes their index entries, marks pages all-visible"
            + " (all-frozen with --freeze) in the visibility map; reads at maintenance_io_concurrency")
    public String vacuum(
            @Descriptor("freeze every tuple visible to all, and scan every page not all-frozen (VACUUM FREEZE)")
            @Parameter(names = {"--freeze"}, presentValue = "true", absentValue = "false") boolean freeze,
            @Descriptor("print VACUUM VERBOSE's report") @Parameter(names = {"-v", "--verbose"}, presentValue = "true",
                    absentValue = "false") boolean verbose,
            @Descriptor("BUFFER_USAGE_LIMIT: the vacuum ring's size, 128kB .. 16GB, or 0 for none (default 2MB, PostgreSQL's)")
            @Parameter(names = {"--buffer-usage-limit"}, absentValue = "") String limit,
            @Descriptor("settings for this run, like SET: maintenance_io_concurrency=N,io_combine_limit=N,track_io_timing=on")
            @Parameter(names = {"--set"}, absentValue = "") String set,
            @Descriptor("table") String table) throws IOException {
        if (table.equals("--help") || table.equals("-h")) {
            return "pageio:vacuum: removes the rows no snapshot sees any more and marks the pages left all-visible\n"
                    + VACUUM_USAGE;
        }
        org.pageio.table.VacuumOptions o;
        try {
            o = new org.pageio.table.VacuumOptions(freeze, ScanSettings.parse(set), limit.isBlank()
                    ? org.pageio.table.VacuumOptions.DEFAULT_RING : org.pageio.table.VacuumOptions.parseBufferUsageLimit(limit));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("pageio:vacuum: " + e.getMessage(), e);
        }
        org.pageio.table.VacuumReport r = tables.vacuum(table, o);
        return verbose ? r.text().stripTrailing() : r.summary();
    }

    @Descriptor("removes a table, its indexes and their files")
    public String drop(@Descriptor("table") String table) throws IOException {
        tables.drop(table);
        return "dropped " + table;
    }
}
