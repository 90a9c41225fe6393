package org.pageio.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.pageio.bufmgr.page.Page;
import org.pageio.bufmgr.page.PgChecksum;

/**
 * PostgreSQL's page checksum ({@code pg_checksum_page}, {@link PgChecksum}) against pageio's own
 * ({@link Page#checksum}, CRC32C) over the same 256 off-heap pages, in the same run: time per page
 * and, with {@code -prof gc}, bytes allocated per page (gc.alloc.rate.norm: 0 for both).
 *
 * <pre>./pageio bench PgChecksumBench -prof gc</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class PgChecksumBench {

    static final int PAGES = 256;

    Arena arena;
    MemorySegment[] pages;
    PgChecksum pg;
    int next;

    @Setup
    public void setup() {
        arena = Arena.ofShared();
        MemorySegment all = arena.allocate((long) PAGES * Page.SIZE, 4096);
        Random r = new Random(1);
        pages = new MemorySegment[PAGES];
        for (int i = 0; i < PAGES; i++) {
            pages[i] = all.asSlice((long) i * Page.SIZE, Page.SIZE);
            Page.init(pages[i], 0);
            for (long at = Page.HEADER_SIZE; at < Page.SIZE; at += 8) {
                pages[i].set(ValueLayout.JAVA_LONG_UNALIGNED, at, r.nextLong());
            }
        }
        pg = new PgChecksum();
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    /** {@code pg_checksum_page} of one page. */
    @Benchmark
    public int pgChecksumPage() {
        int i = next++ & (PAGES - 1);
        return pg.checksumPage(pages[i], i);
    }

    /** pageio's checksum of one page, the baseline. */
    @Benchmark
    public short pageioChecksum() {
        int i = next++ & (PAGES - 1);
        return Page.checksum(pages[i], i);
    }
}
