package org.pageio.bufmgr;

/**
 * The buffer pool at a glance, as PostgreSQL's {@code pg_buffercache_summary()} shows it: read by
 * {@link BufferPool#summary()} in one pass over the state words without locks, so each buffer is
 * counted as it was when looked at (the sums are not one instant). Immutable.
 *
 * @param used          buffers holding a valid page ({@code buffers_used})
 * @param unused        the others, free or being read into ({@code buffers_unused})
 * @param dirty         buffers whose page is not written yet ({@code buffers_dirty})
 * @param pinned        buffers pinned by anyone, a read in flight included ({@code buffers_pinned})
 * @param usageCountAvg the clock sweep's usage count averaged over the used buffers, 0 when none
 *                      ({@code usagecount_avg})
 */
public record BufferCacheSummary(int used, int unused, int dirty, int pinned, double usageCountAvg) {
}
