package org.pageio.bufmgr;

import java.util.Arrays;
import java.util.concurrent.locks.StampedLock;

/**
 * The buffer mapping table (PostgreSQL's {@code buf_table.c}): buffer tag → buffer id, in
 * {@link #PARTITIONS} partitions, each an open-addressing table (linear probing, backward-shift
 * deletion) guarded by its own {@link StampedLock}. Lookups are optimistic: they read without
 * locking and validate the stamp, so the all-cached read path takes no lock and allocates
 * nothing; writers (insert, remove) take the partition's write lock.
 *
 * <p>Keys are non-negative {@code long}s (relation id, fork, block). Thread-safe.
 */
final class BufferMapping {

    static final int PARTITIONS = 128;
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

    private static final class Partition {
        final StampedLock lock = new StampedLock();
        /** Replaced whole on resize, under the write lock. */
        volatile Table table;
        int size;

        Partition(int capacity) {
            table = new Table(capacity);
        }
    }

    private final Partition[] partitions = new Partition[PARTITIONS];

    BufferMapping(int nbuffers) {
        int perPartition = Integer.highestOneBit(Math.max(16, nbuffers / PARTITIONS * 2 - 1)) << 1;
        for (int i = 0; i < PARTITIONS; i++) {
            partitions[i] = new Partition(perPartition);
        }
    }

    static int hash(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    private Partition partition(int hash) {
        return partitions[(hash >>> 25) & (PARTITIONS - 1)];
    }

    /** The buffer mapped to {@code key}, or -1. Lock-free in the common case. */
    int lookup(long key) {
        int hash = hash(key);
        Partition p = partition(hash);
        long stamp = p.lock.tryOptimisticRead();
        int r = probe(p.table, key, hash);
        if (p.lock.validate(stamp)) {
            return r;
        }
        stamp = p.lock.readLock();
        try {
            return probe(p.table, key, hash);
        } finally {
            p.lock.unlockRead(stamp);
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
        long stamp = p.lock.writeLock();
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
            p.lock.unlockWrite(stamp);
        }
    }

    /** Removes {@code key} if it maps to {@code buffer}. Returns whether it was removed. */
    boolean remove(long key, int buffer) {
        int hash = hash(key);
        Partition p = partition(hash);
        long stamp = p.lock.writeLock();
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
            p.lock.unlockWrite(stamp);
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
            long stamp = p.lock.readLock();
            try {
                n += p.size;
            } finally {
                p.lock.unlockRead(stamp);
            }
        }
        return n;
    }
}
