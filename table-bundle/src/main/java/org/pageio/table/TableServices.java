package org.pageio.table;

import java.io.IOException;
import org.pageio.bufmgr.BufferPool;
import org.pageio.table.engine.TableEngine;

/**
 * A {@link TableService} over a buffer pool of one's own, for code that runs its own pools
 * (the drill: a fresh pool per I/O method and round) instead of the container's service.
 */
public final class TableServices {

    private TableServices() {
    }

    /**
     * Tables in {@code pool}'s data directory (catalog {@code <data>/catalog.properties}),
     * read through {@code pool}. The caller closes the pool; the service holds nothing else.
     */
    public static TableService over(BufferPool pool) throws IOException {
        return new TableEngine(pool);
    }
}
