package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class BufferMappingTest {

    /** A tag as {@code BufferPool.tagKey} makes it: the block number in the low bits. */
    private static long tag(int rel, long block) {
        long t = ((long) rel << 40) | block;
        assertEquals(block, BufferPool.tagBlock(t));
        return t;
    }

    @Test
    void consecutiveBlocksShareAPartitionAndNeighbouringHomeSlots() {
        int samePartition = 0;
        int runs = 0;
        for (long first = 0; first < 160_000; first += BufferMapping.GROUP) {
            long key = tag(16385, first);
            int h0 = BufferMapping.hash(key);
            boolean same = true;
            for (int i = 1; i < BufferMapping.GROUP; i++) {
                int h = BufferMapping.hash(key + i);
                assertEquals(h0 + i, h, "block " + (first + i) + ": home slot follows block " + first + "'s");
                same &= BufferMapping.partitionIndex(h) == BufferMapping.partitionIndex(h0);
            }
            samePartition += same ? 1 : 0;
            runs++;
        }
        // only a carry out of the low 25 bits may split a group: about 16 in 2^25 groups
        assertTrue(samePartition >= runs - 2, samePartition + " of " + runs + " groups in one partition");
        // and the groups still spread over every partition
        int[] perPartition = new int[BufferMapping.PARTITIONS];
        for (long g = 0; g < 12_800; g++) {
            perPartition[BufferMapping.partitionIndex(BufferMapping.hash(tag(16385, g * BufferMapping.GROUP)))]++;
        }
        for (int i = 0; i < perPartition.length; i++) {
            assertTrue(perPartition[i] > 50 && perPartition[i] < 150, "partition " + i + " got " + perPartition[i] + " of 12,800 groups");
        }
    }

    @Test
    void insertLookupRemoveAcrossRelationsAndResizes() {
        BufferMapping m = new BufferMapping(64); // small partitions: inserts below resize them
        int n = 0;
        for (int rel = 1; rel <= 3; rel++) {
            for (long b = 0; b < 4000; b++) {
                assertEquals(-1, m.insertIfAbsent(tag(rel, b), n), "a new tag is inserted");
                n++;
            }
        }
        assertEquals(12_000, m.size());
        assertEquals(5, m.insertIfAbsent(tag(1, 5), 99), "an existing tag keeps its buffer");
        n = 0;
        for (int rel = 1; rel <= 3; rel++) {
            for (long b = 0; b < 4000; b++) {
                assertEquals(n, m.lookup(tag(rel, b)));
                n++;
            }
        }
        assertEquals(-1, m.lookup(tag(4, 0)));
        assertTrue(!m.remove(tag(2, 7), 12345), "remove checks the buffer");
        // remove every other group and every third block: backward shift keeps the rest findable
        n = 0;
        for (int rel = 1; rel <= 3; rel++) {
            for (long b = 0; b < 4000; b++) {
                if ((b / BufferMapping.GROUP) % 2 == 0 || b % 3 == 0) {
                    assertTrue(m.remove(tag(rel, b), n), "tag " + rel + "/" + b);
                }
                n++;
            }
        }
        n = 0;
        for (int rel = 1; rel <= 3; rel++) {
            for (long b = 0; b < 4000; b++) {
                boolean removed = (b / BufferMapping.GROUP) % 2 == 0 || b % 3 == 0;
                assertEquals(removed ? -1 : n, m.lookup(tag(rel, b)), "tag " + rel + "/" + b);
                n++;
            }
        }
    }

    /**
     * Two writers insert and remove their own tags, all in one partition with colliding home
     * slots, so every removal shifts others back; readers look tags up between a tag's changes
     * (a per-tag version, odd while it changes) and must see exactly its state. An optimistic
     * lookup that raced a shift must be caught by the sequence check, never answered.
     */
    @Test
    void lookupsSeeEachTagsStateWhileWritersShiftThePartition() throws Exception {
        BufferMapping m = new BufferMapping(64);
        int p0 = BufferMapping.partitionIndex(BufferMapping.hash(tag(1, 0)));
        long[] keys = new long[24];
        for (long b = 0, n = 0; n < keys.length; b += BufferMapping.GROUP) {
            if (BufferMapping.partitionIndex(BufferMapping.hash(tag(1, b))) == p0) {
                keys[(int) n++] = tag(1, b);
            }
        }
        AtomicLongArray version = new AtomicLongArray(keys.length); // even: stable; (v & 3) == 2: present
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<String> failure = new AtomicReference<>();
        AtomicLong checked = new AtomicLong();
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            int first = w;
            writers.add(Thread.ofPlatform().start(() -> {
                SplittableRandom r = new SplittableRandom(first);
                while (!stop.get()) {
                    int k = first + 2 * r.nextInt(keys.length / 2);
                    boolean present = (version.incrementAndGet(k) & 3) == 3;
                    if (present) {
                        m.remove(keys[k], k);
                    } else {
                        m.insertIfAbsent(keys[k], k);
                    }
                    version.incrementAndGet(k);
                }
            }));
        }
        List<Thread> readers = new ArrayList<>();
        for (int rd = 0; rd < 2; rd++) {
            int seed = 10 + rd;
            readers.add(Thread.ofPlatform().start(() -> {
                SplittableRandom r = new SplittableRandom(seed);
                long deadline = System.nanoTime() + 1_500_000_000L;
                while (System.nanoTime() < deadline && failure.get() == null) {
                    int k = r.nextInt(keys.length);
                    long v1 = version.get(k);
                    int got = m.lookup(keys[k]);
                    if ((v1 & 1) == 0 && version.get(k) == v1) {
                        int expected = (v1 & 3) == 2 ? k : -1;
                        if (got != expected) {
                            failure.compareAndSet(null, "tag " + k + " looked up as " + got + ", expected " + expected);
                        }
                        checked.incrementAndGet();
                    }
                }
            }));
        }
        for (Thread t : readers) {
            t.join();
        }
        stop.set(true);
        for (Thread t : writers) {
            t.join();
        }
        assertEquals(null, failure.get());
        assertTrue(checked.get() > 1000, "only " + checked.get() + " lookups between changes");
        for (int k = 0; k < keys.length; k++) {
            assertEquals((version.get(k) & 3) == 2 ? k : -1, m.lookup(keys[k]), "tag " + k + " at the end");
        }
    }
}
