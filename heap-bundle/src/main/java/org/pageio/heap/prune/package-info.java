/**
 * Heap page pruning and freezing: PostgreSQL's pruneheap.c ({@code heap_page_prune_and_freeze},
 * {@code heap_page_prune_opt}'s test) and vacuumlazy.c's {@code lazy_vacuum_heap_page}, reduced
 * to pageio's heap ({@link org.pageio.heap.prune.PruneHeap}).
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.pageio.heap.prune;
