package org.pageio.measure.drill;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.table.IndexInfo;
import org.pageio.table.TableInfo;
import org.pageio.measure.drill.DrillCase.Scan;

/**
 * The cases the options ask for, in run order, each with what it reads.
 *
 * @param cases    in the order each round runs them
 * @param targets  what each case reads
 */
record DrillCases(List<DrillCase> cases, Map<DrillCase, Target> targets) {

    /**
     * What one case reads.
     *
     * @param table      the table's name
     * @param rows       its rows
     * @param heapFiles  its heap's segment files (what the baselines and fio read)
     * @param coldFiles  every file the scan reads (heap and index): evicted and checked
     * @param blocks     null for a sequential scan; else the heap blocks in the order the scan asks for them
     * @param expected   the scan's count(*), from the generator (a PostgreSQL heap's: from its first count)
     * @param pgRelation  a PostgreSQL heap's {@code pg_relation_filepath} when the table is one ({@code --pgdata}); else null
     */
    record Target(String table, long relNumber, long rows, List<Path> heapFiles, List<Path> coldFiles, long[] blocks,
            long expected, String pgRelation) {

        Target(String table, long relNumber, long rows, List<Path> heapFiles, List<Path> coldFiles, long[] blocks, long expected) {
            this(table, relNumber, rows, heapFiles, coldFiles, blocks, expected, null);
        }
    }

    /**
     * The count(*) cases over a PostgreSQL heap ({@code --pgdata}): cold per eic and OS-warm, as over
     * {@code t}, reading {@code files}, the heap's segment files, of {@code blocks} blocks and
     * {@code visible} visible tuples.
     */
    static DrillCases ofPg(DrillOptions opts, String relation, List<Path> files, long blocks, long tuples, long visible) {
        List<DrillCase> cases = new ArrayList<>();
        Map<DrillCase, Target> targets = new LinkedHashMap<>();
        Target seq = new Target(relation, 0, tuples, files, files, null, visible, relation);
        long bytes = blocks * StorageManager.BLCKSZ;
        if (opts.runs("seq")) {
            for (int e : opts.eic()) {
                DrillCase c = new DrillCase("seq-cold-eic" + e, "count(*) of PostgreSQL's " + relation + ", cold,"
                        + " effective_io_concurrency=" + e, Scan.SEQ, true, e, bytes);
                cases.add(c);
                targets.put(c, seq);
            }
        }
        if (opts.runs("warm")) {
            DrillCase c = new DrillCase("seq-warm", "count(*) of PostgreSQL's " + relation + ", OS page cache warm (shared buffers"
                    + " empty), effective_io_concurrency=" + DrillOptions.DEFAULT_EIC_VALUE, Scan.SEQ, false,
                    DrillOptions.DEFAULT_EIC_VALUE, bytes);
            cases.add(c);
            targets.put(c, seq);
        }
        return new DrillCases(cases, targets);
    }

    /**
     * The cases over {@code t} (sequential scans; null when none asked for) and {@code pf}
     * (bitmap and index scans; null when none asked for).
     *
     * @throws IllegalArgumentException when the options leave no case
     */
    static DrillCases of(DrillOptions opts, StorageManager smgr, TableInfo t, TableInfo pf) {
        List<DrillCase> cases = new ArrayList<>();
        Map<DrillCase, Target> targets = new LinkedHashMap<>();
        if (t != null) {
            List<Path> files = DrillTables.heapFiles(smgr, t);
            Target seq = new Target(t.name(), t.relNumber(), t.rows(), files, files, null, t.rows());
            long bytes = t.blocks() * (long) StorageManager.BLCKSZ;
            if (opts.runs("seq")) {
                for (int e : opts.eic()) {
                    DrillCase c = new DrillCase("seq-cold-eic" + e, "count(*) of t, cold, effective_io_concurrency=" + e, Scan.SEQ,
                            true, e, bytes);
                    cases.add(c);
                    targets.put(c, seq);
                }
            }
            if (opts.runs("warm")) {
                DrillCase c = new DrillCase("seq-warm", "count(*) of t, OS page cache warm (shared buffers empty),"
                        + " effective_io_concurrency=" + DrillOptions.DEFAULT_EIC_VALUE, Scan.SEQ, false,
                        DrillOptions.DEFAULT_EIC_VALUE, bytes);
                cases.add(c);
                targets.put(c, seq);
            }
        }
        if (pf != null) {
            TableInfo p = pf;
            List<Path> heap = DrillTables.heapFiles(smgr, p);
            List<Path> all = new ArrayList<>(heap);
            IndexInfo idx = p.index(Drill.KEY_COLUMN);
            all.addAll(smgr.open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, idx.relNumber())).segmentPaths(idx.blocks()));
            long[] fetches = DrillTables.indexOrderBlocks(p.rows(), p.seed());
            long[] distinct = DrillTables.distinctSorted(fetches);
            long bytes = distinct.length * (long) StorageManager.BLCKSZ;
            String pred = String.format(Locale.ROOT, "val BETWEEN %d AND %d: %,d rows (%.2f%%), %,d of %,d heap blocks (%.1f%%)",
                    Drill.KEY_LO, Drill.KEY_HI, fetches.length, 100.0 * fetches.length / p.rows(), distinct.length, p.blocks(),
                    100.0 * distinct.length / p.blocks());
            Target bitmap = new Target(p.name(), p.relNumber(), p.rows(), heap, all, distinct, fetches.length);
            Target index = new Target(p.name(), p.relNumber(), p.rows(), heap, all, fetches, fetches.length);
            for (int e : opts.runs("bitmap") ? opts.eic() : List.<Integer>of()) {
                DrillCase c = new DrillCase("bitmap-cold-eic" + e, "bitmap heap scan of prefetch_test, cold,"
                        + " effective_io_concurrency=" + e + ": " + pred + ", read in block order", Scan.BITMAP, true, e, bytes);
                cases.add(c);
                targets.put(c, bitmap);
            }
            for (int e : opts.runs("index") ? opts.eic() : List.<Integer>of()) {
                DrillCase c = new DrillCase("index-cold-eic" + e, "index scan of prefetch_test, cold, effective_io_concurrency="
                        + e + ": count(*), sum(length(payload)) WHERE " + pred + String.format(Locale.ROOT,
                        "; %,d heap fetches in index order, %,d of them repeat a block", fetches.length,
                        fetches.length - distinct.length), Scan.INDEX, true, e, bytes);
                cases.add(c);
                targets.put(c, index);
            }
        }
        if (cases.isEmpty() && !opts.runs("visibility") && !opts.runs("hot") && !opts.runs("concurrent")) {
            throw new IllegalArgumentException("no case to run (--cases " + String.join(",", opts.cases()) + " with --eic "
                    + opts.eic() + ")");
        }
        return new DrillCases(cases, targets);
    }
}
