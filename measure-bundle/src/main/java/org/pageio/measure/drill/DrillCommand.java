package org.pageio.measure.drill;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.wiring.BundleRevision;
import org.osgi.resource.Capability;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.report.Json;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.pgdata.PgCluster;
import org.pageio.settings.DataDirectory;
import org.pageio.settings.RegisteredMethods;
import org.pageio.shell.command.CommandUsage;
import org.pageio.shell.command.Commands;
import org.pageio.table.TableShape;

/**
 * {@code pageio:drill}: the cold-scan drill over every registered, available
 * {@link IoMethod}. The drill runs its own buffer pools (one per method per round) over
 * its own directory {@code <data>/drill}, so it never touches the container's buffer manager or
 * catalog. Progress goes to stderr (a live line when {@value #TTY_PROPERTY} is true, which
 * {@code ./pageio drill} sets when stderr is a terminal; plain lines otherwise); the result table
 * is the command's value, and {@code <timestamp>.json}, {@code .md} and {@code .svg} are written
 * to the results directory (see {@link DrillResults}).
 */
@Component(service = DrillCommand.class, property = {
        Commands.SCOPE + "=" + Commands.PAGEIO,
        Commands.FUNCTION + "=drill"
})
public final class DrillCommand {

    /** Framework/system property: the default results directory. */
    public static final String RESULTS_PROPERTY = DrillResults.PROPERTY;
    /** Framework/system property: {@code true} when stderr is a terminal (a live progress line). */
    public static final String TTY_PROPERTY = "pageio.drill.tty";
    /** How long the drill waits for active method bundles to register their method. */
    static final long METHODS_WAIT_MS = 10_000;
    /** The usage line in a refusal of a numeric option. */
    static final CommandUsage USAGE = new CommandUsage("pageio:drill", "pageio:drill [--rows N] [--rounds 1..100]"
            + " [--methods m1,m2] [--eic 1,16,64] [--cases seq,warm,bitmap,index,visibility,hot,concurrent] [--sessions 1,2,8,32] [--vacuum-buffer-usage-limit SIZE]"
            + " [--shared-buffers N] [--data DIR] [--pgdata DIR --relation base/DBOID/RELFILENODE]"
            + " [--results DIR|none] [--no-fio] [--seq-hint] [--format text|json]");

    private final Map<ServiceReference<IoMethod>, IoMethod> methods;
    private final String dataProperty;
    private final String resultsProperty;
    private final boolean tty;
    private final BundleContext context;

    @Activate
    public DrillCommand(BundleContext context, @Reference RegisteredMethods registered) {
        this.context = context;
        this.methods = registered.all();
        this.dataProperty = context.getProperty(DataDirectory.PROPERTY);
        this.resultsProperty = context.getProperty(RESULTS_PROPERTY);
        this.tty = Boolean.parseBoolean(context.getProperty(TTY_PROPERTY));
    }

    /**
     * Waits (at most {@value #METHODS_WAIT_MS} ms) until every active bundle that declares an
     * {@code IoMethod} service (bnd's {@code osgi.service} capability) has registered one: right
     * after start-up a method bundle can be active while its component is still being activated,
     * and "every available method" must not silently miss it.
     */
    private void awaitMethodBundles() {
        long deadline = System.currentTimeMillis() + METHODS_WAIT_MS;
        while (true) {
            Set<Long> registeredBy = new HashSet<>();
            for (ServiceReference<IoMethod> ref : methods.keySet()) {
                if (ref.getBundle() != null) {
                    registeredBy.add(ref.getBundle().getBundleId());
                }
            }
            boolean missing = false;
            for (Bundle b : context.getBundles()) {
                if (b.getState() == Bundle.ACTIVE && declaresMethod(b) && !registeredBy.contains(b.getBundleId())) {
                    missing = true;
                    break;
                }
            }
            if (!missing || System.currentTimeMillis() >= deadline) {
                return;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static boolean declaresMethod(Bundle b) {
        BundleRevision rev = b.adapt(BundleRevision.class);
        if (rev == null) {
            return false;
        }
        for (Capability c : rev.getCapabilities("osgi.service")) {
            Object oc = c.getAttributes().get("objectClass");
            if (oc instanceof Collection<?> list && list.contains(IoMethod.class.getName())
                    || IoMethod.class.getName().equals(oc)) {
                return true;
            }
        }
        return false;
    }

    /** {@code --vacuum-buffer-usage-limit}'s value, refused in one line naming the option and its range. */
    private static long vacuumLimit(String text) {
        try {
            return new org.pageio.table.VacuumOptions(false, null, org.pageio.table.VacuumOptions.parseBufferUsageLimit(text))
                    .bufferUsageLimitKb();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--vacuum-buffer-usage-limit: " + e.getMessage());
        }
    }

    /**
     * shared_buffers for a drill over a PostgreSQL heap: scaled as for a {@code t} of as many blocks
     * ({@link DrillOptions#scaledSharedBuffers} of {@link TableShape#T}'s rows per page × blocks).
     */
    private static int pgSharedBuffers(Path pgdata, String relation) throws IOException {
        try (PgCluster cluster = PgCluster.open(pgdata)) {
            return DrillOptions.scaledSharedBuffers(Math.max(1, cluster.relation(relation).nblocks() * TableShape.T.rowsPerPage()));
        }
    }

    @Descriptor("the cold-scan drill: load t and prefetch_test, then cold and OS-warm count(*), a cold bitmap heap scan"
            + " and a cold index scan per io_method, interleaved rounds, medians, FileChannel/AsynchronousFileChannel/fio baselines;"
            + " and PostgreSQL 19's visibility map test (vis_test: index-only scans, a scan that sets the map, VACUUM);"
            + " writes drill-results/<timestamp>.json, .md and .svg")
    public String drill(
            @Descriptor("rows of table t and of prefetch_test, 1 or more (default 8000000: about 1.9 GB and 1.4 GB)")
            @Parameter(names = {"-r", "--rows"}, absentValue = "8000000") String rowsText,
            @Descriptor("interleaved rounds, 1 to 100 (default 4)")
            @Parameter(names = {"-n", "--rounds"}, absentValue = "4") String roundsText,
            @Descriptor("io_method values, comma-separated (default: every available one)")
            @Parameter(names = {"-m", "--methods"}, absentValue = "all") String methodList,
            @Descriptor("effective_io_concurrency values of the cold cases, comma-separated (default 1,16,64)")
            @Parameter(names = {"-e", "--eic"}, absentValue = "1,16,64") String eic,
            @Descriptor("shared_buffers in 8 kB blocks, at least 16 (default: 32768 = 256MB at 8000000 rows, scaled with --rows,"
                    + " at least 2048)")
            @Parameter(names = {"--shared-buffers"}, absentValue = "") String sharedBuffersText,
            @Descriptor("data directory; the drill keeps its table in <data>/drill (default: pageio.data)")
            @Parameter(names = {"-d", "--data"}, absentValue = "") String data,
            @Descriptor("results directory (default: pageio.drill.results, else ./drill-results); 'none' writes no files")
            @Parameter(names = {"--results"}, absentValue = "") String results,
            @Descriptor("cases, comma-separated: seq (cold count(*) per eic), warm, bitmap, index, visibility, hot (a table in shared"
                    + " buffers against a plain loop), concurrent (sessions scanning at once) (default: all)")
            @Parameter(names = {"-c", "--cases"}, absentValue = "all") String cases,
            @Descriptor("the concurrent case's numbers of sessions scanning at once, comma-separated, each 1 to 64 (default 1,2,8,32)")
            @Parameter(names = {"--sessions"}, absentValue = "1,2,8,32") String sessions,
            @Descriptor("do not run the fio baselines even when fio is installed")
            @Parameter(names = {"--no-fio"}, absentValue = "false", presentValue = "true") boolean noFio,
            @Descriptor("also run each buffered method with posix_fadvise(SEQUENTIAL) on t's segment files in the cold count(*)"
                    + " cases (a lever to measure; PostgreSQL gives no such advice)")
            @Parameter(names = {"--seq-hint"}, absentValue = "false", presentValue = "true") boolean seqHint,
            @Descriptor("the visibility case's VACUUM (BUFFER_USAGE_LIMIT …): 0 for no ring, or 128kB .. 16GB (default: 2MB,"
                    + " PostgreSQL's)")
            @Parameter(names = {"--vacuum-buffer-usage-limit"}, absentValue = "") String vacuumLimit,
            @Descriptor("a stopped PostgreSQL cluster's data directory: the count(*) cases read --relation's heap there, read-only,"
                    + " instead of t")
            @Parameter(names = {"--pgdata"}, absentValue = "") String pgdata,
            @Descriptor("with --pgdata: the heap's file as pg_relation_filepath() prints it, e.g. base/5/16384")
            @Parameter(names = {"--relation"}, absentValue = "") String relation,
            @Descriptor("output format: text (default: the tables and a reading) or json (the results file's content)")
            @Parameter(names = {"-f", "--format"}, absentValue = "text") String format) throws IOException {
        // every option is checked before an hour of drill
        long rows = USAGE.whole("--rows", "rows", rowsText, 1, Long.MAX_VALUE);
        int rounds = USAGE.wholeInt("--rounds", "rounds", roundsText, 1, 100);
        int sharedBuffers = !sharedBuffersText.isEmpty()
                ? USAGE.wholeInt("--shared-buffers", "8 kB blocks", sharedBuffersText, 16, Integer.MAX_VALUE)
                : pgdata.isEmpty() ? DrillOptions.scaledSharedBuffers(rows) : pgSharedBuffers(Path.of(pgdata), relation);
        boolean json = Json.requested(format);
        Path dataDir = DataDirectory.of(data.isEmpty() ? dataProperty : data).resolve("drill");
        Path resultsDir = results.equals("none") ? null : DrillResults.directory(results.isEmpty() ? resultsProperty : results);
        if (pgdata.isEmpty() != relation.isEmpty()) {
            throw new IllegalArgumentException("pageio:drill: --pgdata DIR and --relation RELPATH go together (RELPATH as"
                    + " pg_relation_filepath() prints it, e.g. base/5/16384)");
        }
        DrillOptions.PgSource pg = pgdata.isEmpty() ? null : new DrillOptions.PgSource(Path.of(pgdata), relation);
        List<String> caseList = pg != null && cases.equals("all") ? DrillOptions.PG_CASES : DrillOptions.parseCases(cases);
        DrillOptions opts = new DrillOptions(rows, rounds, DrillOptions.parseMethods(methodList), DrillOptions.parseEic(eic),
                sharedBuffers, dataDir, resultsDir,
                StorageManager.DEFAULT_SEGMENT_BLOCKS, 1, caseList, !noFio, seqHint,
                vacuumLimit.isEmpty() ? org.pageio.table.VacuumOptions.DEFAULT_RING : vacuumLimit(vacuumLimit),
                DrillOptions.parseSessions(sessions), pg);
        awaitMethodBundles();
        Map<String, IoMethod> registered = new TreeMap<>();
        methods.forEach((ref, m) -> {
            Object p = ref.getProperty(IoMethod.PROPERTY);
            String name = p instanceof String s && !s.isBlank() ? s : m.name();
            registered.putIfAbsent(name, m);
        });
        PrintStream err = System.err;
        DrillResult result = new Drill(opts, registered, DrillProgress.to(err, tty, 2_000_000_000L)).run();
        DrillReport report = new DrillReport(result);
        String text = json ? report.json() : report.text();
        if (resultsDir != null) {
            Path file = report.write(resultsDir);
            String stem = file.getFileName().toString().replace(DrillResults.JSON, "");
            String where = "Results: " + file + ", " + stem + DrillResults.MARKDOWN + " and " + stem + DrillResults.SVG + " (bar chart)";
            if (json) {
                err.println("drill: " + where); // stdout stays one JSON document
            } else {
                text += "\n\n" + where;
            }
        }
        return text;
    }
}
