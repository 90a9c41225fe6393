package org.pageio.table.internal;

import java.io.IOException;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.bufmgr.BufferManager;
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
 */
@Component(service = TableService.class)
public final class TableServiceComponent implements TableService {

    private final TableEngine engine;

    @Activate
    public TableServiceComponent(@Reference BufferManager bufferManager) throws IOException {
        this.engine = new TableEngine(bufferManager.pool());
    }

    @Override
    public List<TableInfo> tables() {
        return engine.tables();
    }

    @Override
    public TableInfo table(String name) throws TableException {
        return engine.table(name);
    }

    @Override
    public LoadResult load(String name, TableShape shape, long rows, long seed, LoadProgress progress) throws IOException {
        return engine.load(name, shape, rows, seed, progress);
    }

    @Override
    public LoadResult load(String name, TableShape shape, long rows, long seed, org.pageio.table.LoadSink sink,
            LoadProgress progress) throws IOException {
        return engine.load(name, shape, rows, seed, sink, progress);
    }

    @Override
    public IndexInfo createIndex(String table, String column) throws IOException {
        return engine.createIndex(table, column);
    }

    @Override
    public ScanReport scan(ScanRequest request) throws IOException {
        return engine.scan(request);
    }

    @Override
    public ScanReport plan(ScanRequest request) throws IOException {
        return engine.plan(request);
    }

    @Override
    public void drop(String name) throws IOException {
        engine.drop(name);
    }
}
