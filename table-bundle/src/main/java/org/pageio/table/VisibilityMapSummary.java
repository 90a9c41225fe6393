package org.pageio.table;

/**
 * PostgreSQL's {@code pg_visibility_map_summary(table)}: how many heap pages the visibility map
 * marks all-visible and all-frozen. A table loaded by pageio has every page in both.
 *
 * @param allVisible heap pages with {@code VISIBILITYMAP_ALL_VISIBLE} set ({@code all_visible})
 * @param allFrozen  heap pages with {@code VISIBILITYMAP_ALL_FROZEN} set ({@code all_frozen})
 * @since 1.5.0
 */
public record VisibilityMapSummary(long allVisible, long allFrozen) {
}
