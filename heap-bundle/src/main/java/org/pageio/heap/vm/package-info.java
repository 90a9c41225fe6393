/**
 * The visibility map: PostgreSQL's visibilitymap.c layout in a relation's vm fork, through the buffer manager.
 *
 * <p>1.1.0: {@link org.pageio.heap.vm.VisibilityMap#pin} and
 * {@link org.pageio.heap.vm.VisibilityMap#set(long, int, org.pageio.heap.vm.VisibilityMap.VmBuffer)}
 * ({@code visibilitymap_pin}, {@code visibilitymap_set} on a pinned map page).
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package org.pageio.heap.vm;
