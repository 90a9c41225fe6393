package org.pageio.table.internal;

import java.io.IOException;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.BufferPool;
import org.pageio.table.IndexInfo;
import org.pageio.table.LoadProgress;
import org.pageio.table.LoadResult;
import org.pageio.table.ScanReport;
import org.pageio.table.ScanRequest;
import org.pageio.table.TableException;
import org.pageio.table.TableInfo;
import org.pageio.table.TableService;
import org.pageio.table.TableShape;
import org.pageio.table.engine.TableEngine;

/**
 * The {@link TableService}, over the {@link BufferManager} service (a static reference: when the
 * buffer manager is re-registered, this component is too, with a fresh engine on the new pool).
 * While the buffer manager's start stands refused (its {@code pool()} throws saying why), this
 * service still activates and every method throws that IllegalStateException, so that a command
 * prints the reason instead of failing to find its target.
 *
 * <p>Configuration PID {@value #PID} ({@link TableConfig}): applied at activation and, live, by
 * {@link #modified} (the engine reads it at each scan's start).
 */
@Component(service = TableService.class, configurationPid = TableServiceComponent.PID)
@Designate(ocd = TableConfig.class)
public final class TableServiceComponent implements TableService {

    /** The configuration PID of the table service. */
    public static final String PID = "org.pageio.table";

    /** Null while the buffer manager is not running. */
    private final TableEngine engine;
    /** Why there is no engine, or null. */
    private final String notRunning;

    @Activate
    public TableServiceComponent(@Reference BufferManager bufferManager, TableConfig config) throws IOException {
        BufferPool pool = null;
        String why = null;
        try {
            pool = bufferManager.pool();
        } catch (IllegalStateException e) {
            why = e.getMessage();
        }
        this.engine = pool == null ? null : new TableEngine(pool);
        this.notRunning = why;
        modified(config);
    }

    /** A configuration change: applied to the scans that start from now on. */
    @Modified
    void modified(TableConfig config) {
        if (engine != null) {
            engine.setScanSetsVisibilityMap(config.scan__sets__visibility__map());
        }
    }

    private TableEngine engine() {
        if (engine == null) {
            throw new IllegalStateException(notRunning);
        }
        return engine;
    }

    @Override
    public List<TableInfo> tables() {
        return engine().tables();
    }

    @Override
    public TableInfo table(String name) throws TableException {
        return engine().table(name);
    }

    @Override
    public org.pageio.table.VisibilityMapSummary visibilityMapSummary(String table) throws java.io.IOException {
        return engine().visibilityMapSummary(table);
    }

    @Override
    public LoadResult load(String name, TableShape shape, long rows, long seed, LoadProgress progress) throws IOException {
        return engine().load(name, shape, rows, seed, progress);
    }

    @Override
    public LoadResult load(String name, TableShape shape, long rows, long seed, org.pageio.table.LoadSink sink,
            LoadProgress progress) throws IOException {
        return engine().load(name, shape, rows, seed, sink, progress);
    }

    @Override
    public IndexInfo createIndex(String table, String column) throws IOException {
        return engine().createIndex(table, column);
    }

    @Override
    public ScanReport scan(ScanRequest request) throws IOException {
        return engine().scan(request);
    }

    @Override
    public ScanReport plan(ScanRequest request) throws IOException {
        return engine().plan(request);
    }

    @Override
    public long delete(String table, org.pageio.table.RowFilter where) throws IOException {
        return engine().delete(table, where);
    }

    @Override
    public org.pageio.table.TupleStats tupleStats(String table) throws org.pageio.table.TableException {
        return engine().tupleStats(table);
    }

    @Override
    public long update(String table, org.pageio.table.SetClause set, org.pageio.table.RowFilter where) throws IOException {
        return engine().update(table, set, where);
    }

    @Override
    public org.pageio.table.VacuumReport vacuum(String table, org.pageio.table.VacuumOptions options) throws IOException {
        return engine().vacuum(table, options);
    }

    @Override
    public void drop(String name) throws IOException {
        engine().drop(name);
    }
}
