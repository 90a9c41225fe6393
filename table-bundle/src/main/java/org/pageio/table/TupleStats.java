package org.pageio.table;

/**
 * A table's row counts as PostgreSQL's {@code pg_stat_user_tables} shows them: live rows
 * ({@code n_live_tup}) and row versions no snapshot started now sees ({@code n_dead_tup}). Kept by
 * the commands that change rows, persisted with the catalog after each commit. Immutable.
 *
 * @since 1.6.0
 */
public record TupleStats(long nLiveTup, long nDeadTup) {
}
