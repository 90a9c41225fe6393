package org.pageio.pgdata;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.pageio.bufmgr.BufferAccessStrategy;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.BufferSession;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.page.PgChecksum;
import org.pageio.bufmgr.smgr.ForkNumber;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.stream.ReadStream;
import org.pageio.heap.vm.VisibilityMap;

/**
 * A PostgreSQL heap's visibility map as {@code pg_visibility_map_summary(rel)}
 * ({@code contrib/pg_visibility}) shows it: over the heap's blocks
 * ({@code RelationGetNumberOfBlocks}), how many have {@code VISIBILITYMAP_ALL_VISIBLE} and how many
 * {@code VISIBILITYMAP_ALL_FROZEN} in the {@code _vm} fork, each read as
 * {@code visibilitymap_get_status} reads it: heap block {@code b}'s two bits in map block
 * {@code HEAPBLK_TO_MAPBLOCK(b)}, byte {@code HEAPBLK_TO_MAPBYTE(b)} after the page header, from bit
 * {@code HEAPBLK_TO_OFFSET(b)} (the layout is heap-bundle's {@link VisibilityMap}, which is
 * PostgreSQL's). A heap block beyond the map, or a heap without a {@code _vm} fork, has neither bit,
 * as in {@code visibilitymap_get_status}.
 *
 * <p>The map pages are read through the pool's read stream over the fork (as stored: the cluster's
 * storage manager verifies nothing), their checksums checked as {@code PageIsVerified} checks them
 * ({@link PgHeapScan#verifyPage}).
 */
public final class PgVisibilityMap {

    /** {@code pg_visibility_map_summary}'s row: {@code all_visible}, {@code all_frozen}. */
    public record Summary(long allVisible, long allFrozen) {
    }

    private PgVisibilityMap() {
    }

    /**
     * {@code pg_visibility_map_summary} of the heap whose main fork's path is
     * {@code relationFilepath} ({@code pg_relation_filepath()}'s), through {@code pool} (the
     * cluster's: {@link PgCluster#openBufferManager}).
     *
     * @throws PgDataException for a map page whose header or checksum is bad, naming file and block
     * @throws IllegalArgumentException for a path that is not a relation's
     */
    public static Summary summary(PgCluster cluster, BufferPool pool, String relationFilepath) throws IOException {
        cluster.requireOwnPool(pool);
        SmgrRelation heap = cluster.relation(relationFilepath);
        SmgrRelation vm = cluster.relation(relationFilepath, ForkNumber.VISIBILITYMAP_FORKNUM);
        try {
            long nblocks = heap.nblocks();
            long mapBlocks = vm.exists() ? Math.min(vm.nblocks(), VisibilityMap.mapBlocks(nblocks)) : 0;
            if (mapBlocks == 0) {
                return new Summary(0, 0);
            }
            boolean checksums = cluster.controlFile().dataChecksums();
            PgChecksum pg = new PgChecksum();
            long allVisible = 0;
            long allFrozen = 0;
            BufferAccessStrategy ring = pool.strategy(BufferAccessStrategy.Type.BULKREAD);
            try (BufferSession session = pool.openSession("pg_visibility");
                    ReadStream stream = new ReadStream(session, vm, ReadStream.blockRange(0, mapBlocks),
                            ReadStream.SEQUENTIAL | ReadStream.USE_BATCHING, ring)) {
                for (long mapBlock = 0; mapBlock < mapBlocks; mapBlock++) {
                    int buf = stream.next();
                    try {
                        MemorySegment page = session.page(buf);
                        PgHeapScan.verifyPage(page, mapBlock, checksums, vm, pg);
                        if (Page.isNew(page)) {
                            continue; // an all-zero page (a map extended, not written): no bit set
                        }
                        long first = mapBlock * VisibilityMap.HEAPBLOCKS_PER_PAGE;
                        long end = Math.min(nblocks, first + VisibilityMap.HEAPBLOCKS_PER_PAGE);
                        for (long heapBlk = first; heapBlk < end; heapBlk++) {
                            int mapbits = (page.get(ValueLayout.JAVA_BYTE,
                                    VisibilityMap.MAP_OFFSET + VisibilityMap.heapBlkToMapByte(heapBlk))
                                    >> VisibilityMap.heapBlkToOffset(heapBlk)) & VisibilityMap.VISIBILITYMAP_VALID_BITS;
                            if ((mapbits & VisibilityMap.VISIBILITYMAP_ALL_VISIBLE) != 0) {
                                allVisible++;
                            }
                            if ((mapbits & VisibilityMap.VISIBILITYMAP_ALL_FROZEN) != 0) {
                                allFrozen++;
                            }
                        }
                    } finally {
                        session.releaseBuffer(buf);
                    }
                }
            }
            return new Summary(allVisible, allFrozen);
        } finally {
            vm.close();
            heap.close();
        }
    }
}
