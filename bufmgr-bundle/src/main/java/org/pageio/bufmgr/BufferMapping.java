package org.pageio.bufmgr;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The buffer mapping table (PostgreSQL's {@code buf_table.c}): buffer tag → buffer id, in
 * {@link #PARTITIONS} partitions, each an open-addressing table (linear probing, backward-shift
 * deletion) guarded by its own sequence lock. Lookups are optimistic: they read without
 * locking and validate the sequence, so the all-cached read path takes no lock and allocates
 * nothing; writers (insert, remove) take the partition's lock.
 *
 * <p><b>Locality.</b> The tags of {@link #GROUP} consecutive blocks of a relation share a
 * partition and have consecutive home slots ({@link #hash}): a read stream maps, and a bulk-read
 * ring evicts, blocks in runs, so a run of lookups, inserts and removes touches a few cache lines
 * of one partition instead of one line of a different partition per block.
 *
 * <p><b>The sequence lock.</b> {@code seq} is even while the partition is unlocked. A writer
 * CASes it odd (spinning, then yielding, while another writer holds it: critical sections are a
 * few probes long, never a system call), changes the table, and stores it even again with
 * <em>release</em> semantics (every table write before is visible to a reader that sees the new
 * value; no full fence, unlike a volatile store). A reader loads {@code seq} with
 * <em>acquire</em>, probes, issues an acquire fence (the probe's loads are ordered before the
 * re-load) and re-loads it: unchanged and even means the probe saw no write. Probes cannot fail
 * on a torn table (indices are masked, a resize replaces the table whole through a volatile
 * field), only return a wrong answer, which validation rejects. A reader that fails
 * {@link #OPTIMISTIC_TRIES} times takes the lock itself.
 *
 * <p>Keys are non-negative {@code long}s (relation id, fork, block). Thread-safe.
 */
final class BufferMapping {

    static final int PARTITIONS = 128;
    /** Consecutive blocks whose tags share a partition and neighbouring home slots: {@code 1 << GROUP_SHIFT}. */
    static final int GROUP_SHIFT = 4;
    static final int GROUP = 1 << GROUP_SHIFT;
    private static final int OPTIMISTIC_TRIES = 4;
    private static final int SPINS_BEFORE_YIELD = 64;
    private static final long EMPTY = -1L;

    private static final class Table {
        final long[] keys;
        final int[] values;
        final int mask;

        Table(int capacity) {
            keys = new long[capacity];
            values = new int[capacity];
            mask = capacity - 1;
            Arrays.fill(keys, EMPTY);
        }
    }

    private static final VarHandle SEQ;

    static {
        try {
            SEQ = MethodHandles.lookup().findVarHandle(Partition.class, "seq", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final class Partition {
        /** Even: unlocked; odd: a writer holds the partition. Accessed through {@link #SEQ} only. */
        @SuppressWarnings("unused")
        int seq;
        /** Replaced whole on resize, under the lock. */
        volatile Table table;
        /** Under the lock only. */
        int size;

        Partition(int capacity) {
            table = new Table(capacity);
        }

        /** Takes the lock (CAS even → odd, acquire-release); returns the odd value held. */
        int lock() {
            for (int spins = 0;; spins++) {
                int s = (int) SEQ.getAcquire(this);
                if ((s & 1) == 0 && SEQ.compareAndSet(this, s, s + 1)) {
                    return s + 1;
                }
                if (spins < SPINS_BEFORE_YIELD) {
                    Thread.onSpinWait();
                } else {
                    Thread.yield();
                }
            }
        }

        /** Releases the lock taken as {@code held}: a release store, so the table's writes come first. */
        void unlock(int held) {
            SEQ.setRelease(this, held + 1);
        }
    }

    private final Partition[] partitions = new Partition[PARTITIONS];

    BufferMapping(int nbuffers) {
        int perPartition = Integer.highestOneBit(Math.max(16, nbuffers / PARTITIONS * 2 - 1)) << 1;
        for (int i = 0; i < PARTITIONS; i++) {
            partitions[i] = new Partition(perPartition);
        }
    }

    /**
     * The hash of a tag: a mix of its group (the tag without its low {@link #GROUP_SHIFT} bits),
     * plus its place in the group. The partition takes the top bits, which the addition leaves
     * alone unless the low bits carry into them; the home slot takes the low bits, so the blocks of
     * a group get consecutive home slots.
     */
    static int hash(long key) {
        long h = (key >>> GROUP_SHIFT) * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) + (int) (key & (GROUP - 1));
    }

    private Partition partition(int hash) {
        return partitions[partitionIndex(hash)];
    }

    static int partitionIndex(int hash) {
        return (hash >>> 25) & (PARTITIONS - 1);
    }

    /** The buffer mapped to {@code key}, or -1. Lock-free in the common case. */
    int lookup(long key) {
        int hash = hash(key);
        Partition p = partition(hash);
        for (int i = 0; i < OPTIMISTIC_TRIES; i++) {
            int s = (int) SEQ.getAcquire(p);
            if ((s & 1) != 0) {
                Thread.onSpinWait();
                continue;
            }
            int r = probe(p.table, key, hash);
            VarHandle.acquireFence(); // the probe's loads happen before the re-load below
            if ((int) SEQ.getOpaque(p) == s) {
                return r;
            }
        }
        int held = p.lock();
        try {
            return probe(p.table, key, hash);
        } finally {
            p.unlock(held);
        }
    }

    private static int probe(Table t, long key, int hash) {
        long[] keys = t.keys;
        int mask = t.mask;
        for (int i = hash & mask, n = 0; n <= mask; i = (i + 1) & mask, n++) {
            long k = keys[i];
            if (k == key) {
                return t.values[i];
            }
            if (k == EMPTY) {
                return -1;
            }
        }
        return -1;
    }

    /**
     * Maps {@code key} to {@code buffer} unless it is already mapped, in which case the existing
     * buffer is returned and nothing changes. Returns -1 when inserted.
     */
    int insertIfAbsent(long key, int buffer) {
        int hash = hash(key);
        Partition p = partition(hash);
        int held = p.lock();
        try {
            int existing = probe(p.table, key, hash);
            if (existing >= 0) {
                return existing;
            }
            if ((p.size + 1) * 2 > p.table.keys.length) {
                p.table = rehash(p.table, p.table.keys.length * 2);
            }
            put(p.table, key, buffer, hash);
            p.size++;
            return -1;
        } finally {
            p.unlock(held);
        }
    }

    /** Removes {@code key} if it maps to {@code buffer}. Returns whether it was removed. */
    boolean remove(long key, int buffer) {
        int hash = hash(key);
        Partition p = partition(hash);
        int held = p.lock();
        try {
            Table t = p.table;
            int mask = t.mask;
            int i = hash & mask;
            for (int n = 0; n <= mask; i = (i + 1) & mask, n++) {
                long k = t.keys[i];
                if (k == EMPTY) {
                    return false;
                }
                if (k == key) {
                    break;
                }
            }
            if (t.keys[i] != key || t.values[i] != buffer) {
                return false;
            }
            // backward-shift deletion keeps probe chains intact without tombstones
            int hole = i;
            for (int j = (hole + 1) & mask; t.keys[j] != EMPTY; j = (j + 1) & mask) {
                int home = hash(t.keys[j]) & mask;
                if (((j - home) & mask) >= ((j - hole) & mask)) {
                    t.keys[hole] = t.keys[j];
                    t.values[hole] = t.values[j];
                    hole = j;
                }
            }
            t.keys[hole] = EMPTY;
            p.size--;
            return true;
        } finally {
            p.unlock(held);
        }
    }

    private static void put(Table t, long key, int value, int hash) {
        int mask = t.mask;
        int i = hash & mask;
        while (t.keys[i] != EMPTY) {
            i = (i + 1) & mask;
        }
        t.values[i] = value;
        t.keys[i] = key;
    }

    private static Table rehash(Table old, int capacity) {
        Table t = new Table(capacity);
        for (int i = 0; i < old.keys.length; i++) {
            if (old.keys[i] != EMPTY) {
                put(t, old.keys[i], old.values[i], hash(old.keys[i]));
            }
        }
        return t;
    }

    /** Number of mappings (a snapshot; for tests and views). */
    int size() {
        int n = 0;
        for (Partition p : partitions) {
            int held = p.lock();
            try {
                n += p.size;
            } finally {
                p.unlock(held);
            }
        }
        return n;
    }
}
