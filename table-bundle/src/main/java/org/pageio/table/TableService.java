package org.pageio.table;

import java.io.IOException;
import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Tables on the buffer manager: load, index, scan, verify, drop. Each call runs in the calling
 * thread with a buffer session of its own. Thread-safe; catalog changes are serialised.
 */
@ProviderType
public interface TableService {

    /** Every table in the catalog, by name. */
    List<TableInfo> tables();

    /** The table called {@code name}; a {@link TableException} naming it when there is none. */
    TableInfo table(String name) throws TableException;

    /**
     * The table's visibility map summary (PostgreSQL's {@code pg_visibility_map_summary}): heap
     * pages marked all-visible and all-frozen in its vm fork; 0 and 0 for a table without one.
     *
     * @throws TableException naming the table when there is none, or the map page that could not be read
     * @since 1.5.0
     */
    VisibilityMapSummary visibilityMapSummary(String table) throws IOException;

    /**
     * Creates {@code name} from a shape's generator: {@code rows} rows (shape default when
     * {@code rows <= 0}), {@code seed}. Fails if the table exists.
     */
    LoadResult load(String name, TableShape shape, long rows, long seed, LoadProgress progress) throws IOException;

    /**
     * {@link #load(String, TableShape, long, long, LoadProgress)} through a chosen sink (the other
     * form uses {@link LoadSink#DEFAULT}).
     */
    LoadResult load(String name, TableShape shape, long rows, long seed, LoadSink sink, LoadProgress progress)
            throws IOException;

    /**
     * Builds the ordered index on integer column {@code column}, or on two integer columns named
     * {@code "cat,val"} (keys compared lexicographically), replacing an existing index on the same
     * columns.
     */
    IndexInfo createIndex(String table, String column) throws IOException;

    /** Runs a scan. A checksum scan reports bad blocks in the report; other scans fail on the first. */
    ScanReport scan(ScanRequest request) throws IOException;

    /**
     * The plan {@link #scan} would run, without running it (EXPLAIN without ANALYZE): the nodes
     * and their conditions, no figures; reads no page. Fails as {@link #scan} would on a missing
     * table, column or index.
     */
    ScanReport plan(ScanRequest request) throws IOException;

    /**
     * The table's {@code n_live_tup} and {@code n_dead_tup} ({@code pg_stat_user_tables}).
     *
     * @throws TableException naming the table when there is none
     * @since 1.6.0
     */
    TupleStats tupleStats(String table) throws TableException;

    /**
     * {@code DELETE FROM table WHERE …}: marks every row {@code where} selects deleted by a new
     * transaction and commits it durably before returning; returns the rows deleted (PostgreSQL's
     * {@code DELETE n}).
     *
     * @throws TableException naming the table or column when there is none
     * @throws IllegalArgumentException when the filter does not fit the column's type
     * @since 1.6.0
     */
    long delete(String table, RowFilter where) throws IOException;

    /**
     * {@code UPDATE table SET … WHERE …}: a new version of every row {@code where} selects
     * ({@code heap_update}): on the same page without index change (HOT) when it has room and no
     * indexed value changes, else on the same, the last or a new page with an entry in every index;
     * committed durably before returning; returns the rows updated ({@code UPDATE n}). Refused, and
     * nothing changed, when a new value is outside the column's type.
     *
     * @since 1.6.0
     */
    long update(String table, SetClause set, RowFilter where) throws IOException;

    /**
     * {@code VACUUM [FREEZE] table}: prunes dead tuples no snapshot can see any more, removes their
     * index entries, and marks the pages left with only tuples visible to all all-visible (and
     * all-frozen with {@link VacuumOptions#freeze}) in the page header and the visibility map. The
     * heap is read through a read stream at {@code maintenance_io_concurrency}, skipping pages the
     * map marks all-visible. Returns {@code VACUUM VERBOSE}'s figures. One writer at a time: row
     * changes on the table wait for it.
     *
     * @throws TableException naming the table when there is none, or the relation and block that failed
     * @since 2.1.0
     */
    VacuumReport vacuum(String table, VacuumOptions options) throws IOException;

    /** Removes a table, its indexes and their files. */
    void drop(String name) throws IOException;
}
