package org.pageio.method.posixaio;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.pageio.posix.CallState;
import org.pageio.posix.Posix;

/**
 * Duplicates of the descriptors reads are queued on ({@code posix_aio_fds_per_file}), so that glibc
 * runs several reads of one file at once. glibc keeps one queue per descriptor <em>number</em> and
 * runs one request of a queue at a time: the reads of one relation segment, all on the storage
 * manager's one descriptor, reach the kernel one after another. A duplicate ({@code fcntl(fd,
 * F_DUPFD_CLOEXEC)}) refers to the same open file description — same file, same offset-free
 * {@code pread}, same status flags, O_DIRECT included, and a later {@code F_SETFL} on either shows
 * on both — under another number, so glibc gives it a queue of its own. One instance per method,
 * shared by its sessions.
 *
 * <h2>The table</h2>
 * {@link #table} maps the storage manager's descriptor {@code fd} (an index) to an {@link Entry}:
 * the file's identity ({@code st_dev}, {@code st_ino}), its status flags, and its descriptors —
 * {@code fd} itself first, then the duplicates, {@code posix_aio_fds_per_file} in all. An entry is
 * made when a read is first submitted on {@code fd} ({@link #acquire}, under the table's lock);
 * reads take its descriptors round robin, one per control block.
 *
 * <h2>Reuse of a descriptor number</h2>
 * The storage manager closes its descriptors without telling the method (the SPI has no hook before
 * a close; {@code IoSession.closingFd} only waits), and the kernel gives the number to the next file
 * opened. A duplicate made from the old file must then never be used for the new one. So every
 * use is validated against the descriptor the handle carries, at submission, when the issuer holds
 * that descriptor open with I/O in flight on it (the contract every method relies on:
 * {@code waitOnFdBeforeClose}): {@code fstat(fd)} must give the entry's {@code st_dev} and
 * {@code st_ino}, and {@code fcntl(fd, F_GETFL)} the entry's flags (or, after an {@code F_SETFL},
 * the same flags as the duplicate: one description). The entry's duplicates keep its file open, so
 * no other file can have its {@code st_dev} and {@code st_ino} while the entry lives (POSIX: the pair
 * identifies a file): a match means {@code fd} refers to the entry's file, and the equal flags mean
 * a duplicate reads it as {@code fd} would (same access mode, same O_DIRECT). A mismatch, or a
 * closed {@code fd}, retires the entry and makes a new one from {@code fd} as it is now. One
 * validation serves every read of one {@code submit} call on that descriptor ({@link AioSession}):
 * within the call the issuer keeps it open.
 *
 * <h2>Retirement</h2>
 * {@link Entry#state} counts the reads submitted through the entry and not yet reaped, and holds
 * {@link #RETIRED} once the entry is retired. A submitter {@linkplain Entry#tryAcquire acquires}
 * (compare-and-set, refused once retired) before it validates and uses the descriptors, the reaper
 * releases; the duplicates are closed only by the holder of the table's lock, and only once the
 * state is exactly {@link #RETIRED} (retired, nothing in flight): a duplicate is never closed while
 * glibc may still hold a request on its number, and never used after it was closed. A retired entry
 * with reads in flight waits in {@link #retired} for a later {@link #sweep}.
 *
 * <h2>Bounds</h2>
 * The duplicates of all files together are at most {@value #MAX_DUPLICATES}. Before an entry is
 * made, {@link #sweep} retires the entries whose descriptor was closed or now names another file
 * (so the files the storage manager closed, dropped relations included, are not kept open by their
 * duplicates past the next new file); when still short of room, the idle entries used longest ago
 * are retired. A file that finds no room, or no free descriptor ({@code EMFILE}), is read through its
 * own descriptor only, as with {@code posix_aio_fds_per_file = 1}. Sessions sweep when they close,
 * and the component's deactivation closes every idle duplicate.
 *
 * <h2>Threads</h2>
 * {@link #acquire} and {@link Entry#release} are lock-free on the way of a read whose entry exists
 * and is valid: two system calls per submission call and descriptor, one compare-and-set per read.
 * Everything that makes, retires or closes takes the table's lock ({@code this}). No allocation per
 * I/O: an entry is made once per file.
 */
final class Duplicates {

    /** The most duplicates open at once, over all files. */
    static final int MAX_DUPLICATES = 1024;

    /** {@link Entry#state}: retired; no read may start on its descriptors. The low bits count reads in flight. */
    static final int RETIRED = 1 << 30;

    /** Bytes of a {@code struct stat} buffer ({@code st_dev} at 0, {@code st_ino} at 8 on x86-64 and aarch64). */
    static final long STAT_SIZE = 144;

    /** Elements of {@link #table}: release stores under the lock, acquire loads without it. */
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Entry[].class);
    private static final VarHandle STATE;
    private static final VarHandle NEXT;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATE = l.findVarHandle(Entry.class, "state", int.class);
            NEXT = l.findVarHandle(Entry.class, "next", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // System call numbers: x86_64, aarch64 (the generic table). Aio's availability excludes the rest.
    private static final boolean AARCH64 = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT).equals("aarch64");
    private static final long NR_FSTAT = AARCH64 ? 80 : 5;
    private static final long NR_FCNTL = AARCH64 ? 25 : 72;
    private static final long NR_CLOSE = AARCH64 ? 57 : 3;
    private static final long NR_PRLIMIT64 = AARCH64 ? 261 : 302;
    private static final int F_GETFL = 3;
    private static final int F_DUPFD_CLOEXEC = 1030;
    private static final int RLIMIT_NOFILE = 7;

    /**
     * The lowest number a duplicate takes ({@code F_DUPFD_CLOEXEC}'s minimum): high in the process's
     * {@code RLIMIT_NOFILE}, {@value #MAX_DUPLICATES} below the soft limit (at most 65536, so that
     * the kernel's descriptor table stays small), or half of a limit too small for that. The kernel
     * gives {@code open} the lowest free number, so the storage manager's descriptors fill from
     * below and a duplicate never takes the number of a descriptor just closed (a read on it must
     * fail with EBADF, not read the duplicate's file) unless the process nearly ran out.
     */
    static final int FIRST_DUPLICATE = firstDuplicate();

    private static int firstDuplicate() {
        try (Arena a = Arena.ofConfined()) {
            CallState cs = CallState.allocate(a);
            MemorySegment lim = a.allocate(16, 8);
            if (Posix.syscall(cs, NR_PRLIMIT64, 0, RLIMIT_NOFILE, 0, lim.address(), 0, 0) < 0) {
                return 512;
            }
            long soft = lim.get(ValueLayout.JAVA_LONG, 0);
            return (int) (soft >= 2L * MAX_DUPLICATES ? Math.min(soft - MAX_DUPLICATES, 1 << 16) : soft / 2);
        }
    }

    /** One file's descriptors. */
    static final class Entry {
        /** The storage manager's descriptor: {@link #descriptors}[0], never closed here. */
        final int fd;
        final long dev;
        final long ino;
        /** {@code fd}, then the duplicates (this table's own). */
        final int[] descriptors;
        /** The open file description's status flags when last validated; any thread refreshes it. */
        volatile int flags;
        /** {@link #RETIRED} | reads in flight. CAS and atomic adds only. */
        volatile int state;
        /** The next descriptor, round robin. Atomic adds. */
        volatile int next;
        /** When it was last validated ({@code System.nanoTime}); the least recent idle entry is evicted first. */
        volatile long lastUse;

        Entry(int fd, long dev, long ino, int flags, int[] descriptors) {
            this.fd = fd;
            this.dev = dev;
            this.ino = ino;
            this.flags = flags;
            this.descriptors = descriptors;
        }

        /** Counts one read in flight, unless retired. Any thread. */
        boolean tryAcquire() {
            for (;;) {
                int s = state;
                if ((s & RETIRED) != 0) {
                    return false;
                }
                if (STATE.compareAndSet(this, s, s + 1)) {
                    return true;
                }
            }
        }

        /** Ends what {@link #tryAcquire} counted. Any thread (the reaper). */
        void release() {
            STATE.getAndAdd(this, -1);
        }

        /** The descriptor for the next block, round robin. */
        int pick() {
            int i = (int) NEXT.getAndAdd(this, 1);
            return descriptors[(i & Integer.MAX_VALUE) % descriptors.length];
        }

        int duplicates() {
            return descriptors.length - 1;
        }
    }

    /**
     * Indexed by descriptor number; replaced (grown) under the lock, elements written under it (a new
     * entry with a release store), read without it.
     */
    private volatile Entry[] table = new Entry[64];
    /** {@code posix_aio_fds_per_file}. Written under the lock; read anywhere. */
    private volatile int perFile;
    // Under the lock:
    private int open;
    private final List<Entry> retired = new ArrayList<>();
    private long made;
    private long retiredCount;

    Duplicates(int perFile) {
        this.perFile = perFile;
    }

    /** {@code posix_aio_fds_per_file}: 1 means no duplicates. Any thread. */
    int perFile() {
        return perFile;
    }

    /**
     * The entry of {@code fd}, valid for it and acquired for one read, or {@code null}: read through
     * {@code fd} alone (one descriptor per file, {@code fd} closed, or no room). The issuer holds
     * {@code fd} open. Owner of a session; {@code stat} is its {@value #STAT_SIZE}-byte buffer.
     */
    Entry acquire(int fd, CallState cs, MemorySegment stat) {
        Entry[] t = table;
        Entry e = fd < t.length ? (Entry) SLOT.getAcquire(t, fd) : null;
        if (e != null && e.tryAcquire()) {
            if (valid(e, cs, stat)) {
                e.lastUse = System.nanoTime();
                return e;
            }
            e.release();
        }
        return make(fd, cs, stat);
    }

    /** Whether {@code e.fd} still refers to {@code e}'s file, read with its flags. Held by the caller (acquired, or the lock). */
    private static boolean valid(Entry e, CallState cs, MemorySegment stat) {
        if (Posix.syscall(cs, NR_FSTAT, e.fd, stat.address(), 0, 0, 0, 0) < 0
                || stat.get(ValueLayout.JAVA_LONG, 0) != e.dev || stat.get(ValueLayout.JAVA_LONG, 8) != e.ino) {
            return false;
        }
        long fl = Posix.syscall(cs, NR_FCNTL, e.fd, F_GETFL, 0, 0, 0, 0);
        if (fl == e.flags) {
            return true;
        }
        // one description whose flags changed (F_SETFL, e.g. O_DIRECT switched), or another description of the file
        if (fl >= 0 && Posix.syscall(cs, NR_FCNTL, e.descriptors[1], F_GETFL, 0, 0, 0, 0) == fl) {
            e.flags = (int) fl;
            return true;
        }
        return false;
    }

    /** Makes {@code fd}'s entry (retiring a stale one), acquired; or {@code null}. */
    private synchronized Entry make(int fd, CallState cs, MemorySegment stat) {
        int n = perFile;
        if (n <= 1) {
            return null;
        }
        Entry[] t = table;
        Entry cur = fd < t.length ? t[fd] : null;
        if (cur != null) {
            if (cur.tryAcquire()) {
                if (valid(cur, cs, stat)) { // another session made it meanwhile
                    cur.lastUse = System.nanoTime();
                    return cur;
                }
                cur.release();
            }
            retire(cur, cs);
        }
        sweep(cs, stat);
        if (Posix.syscall(cs, NR_FSTAT, fd, stat.address(), 0, 0, 0, 0) < 0) {
            return null; // closed: the read reports the errno
        }
        long dev = stat.get(ValueLayout.JAVA_LONG, 0);
        long ino = stat.get(ValueLayout.JAVA_LONG, 8);
        long fl = Posix.syscall(cs, NR_FCNTL, fd, F_GETFL, 0, 0, 0, 0);
        if (fl < 0) {
            return null;
        }
        int want = n - 1;
        if (open + want > MAX_DUPLICATES) {
            evictIdle(want, cs);
            want = Math.min(want, MAX_DUPLICATES - open);
        }
        int[] d = new int[1 + Math.max(want, 0)];
        d[0] = fd;
        int k = 1;
        while (k < d.length) {
            long dup = Posix.syscall(cs, NR_FCNTL, fd, F_DUPFD_CLOEXEC, FIRST_DUPLICATE, 0, 0, 0);
            if (dup < 0) {
                break; // EMFILE or EINVAL (no free number from FIRST_DUPLICATE up): fewer duplicates
            }
            d[k++] = (int) dup;
        }
        if (k == 1) {
            return null;
        }
        Entry e = new Entry(fd, dev, ino, (int) fl, k == d.length ? d : Arrays.copyOf(d, k));
        e.state = 1;
        e.lastUse = System.nanoTime();
        open += k - 1;
        made++;
        if (fd >= t.length) {
            t = Arrays.copyOf(t, Math.max(fd + 1, t.length * 2));
        }
        SLOT.setRelease(t, fd, e); // the entry's state and flags before its publication
        table = t;
        return e;
    }

    /** Retires {@code e}: out of the table; its duplicates closed now if nothing is in flight, else at a later sweep. Lock held. */
    private void retire(Entry e, CallState cs) {
        Entry[] t = table;
        if (e.fd < t.length && t[e.fd] == e) {
            t[e.fd] = null;
        }
        int s = (int) STATE.getAndBitwiseOr(e, RETIRED);
        if ((s & RETIRED) != 0) {
            return;
        }
        retiredCount++;
        if (s == 0) {
            close(e, cs);
        } else {
            retired.add(e);
        }
    }

    /** Closes the duplicates of a retired entry with nothing in flight. Lock held. */
    private void close(Entry e, CallState cs) {
        for (int i = 1; i < e.descriptors.length; i++) {
            Posix.syscall(cs, NR_CLOSE, e.descriptors[i], 0, 0, 0, 0, 0); // ours; EINTR still closes it
        }
        open -= e.duplicates();
    }

    /**
     * Retires the entries whose descriptor was closed or names another file now, and closes the
     * duplicates of retired entries whose reads were all reaped. Any thread with a {@code stat}
     * buffer and call state of its own.
     */
    synchronized void sweep(CallState cs, MemorySegment stat) {
        Entry[] t = table;
        for (Entry e : t) {
            if (e != null && !valid(e, cs, stat)) {
                retire(e, cs);
            }
        }
        closeRetired(cs);
    }

    /** Closes the duplicates of the retired entries whose reads were all reaped. Lock held. */
    private void closeRetired(CallState cs) {
        for (int i = retired.size() - 1; i >= 0; i--) {
            Entry e = retired.get(i);
            if (e.state == RETIRED) {
                retired.remove(i);
                close(e, cs);
            }
        }
    }

    /** Retires idle entries, least recently used first, until {@code want} duplicates fit. Lock held. */
    private void evictIdle(int want, CallState cs) {
        while (open + want > MAX_DUPLICATES) {
            Entry oldest = null;
            for (Entry e : table) {
                if (e != null && e.state == 0 && (oldest == null || e.lastUse - oldest.lastUse < 0)) {
                    oldest = e;
                }
            }
            if (oldest == null || !STATE.compareAndSet(oldest, 0, RETIRED)) {
                return;
            }
            table[oldest.fd] = null;
            retiredCount++;
            close(oldest, cs);
        }
    }

    /**
     * Sets {@code posix_aio_fds_per_file} and retires every entry: the next read of each file makes
     * one with the new number. Any thread (the configuration's).
     */
    synchronized void setPerFile(int n) {
        if (n == perFile) {
            return;
        }
        perFile = n;
        retireAll();
    }

    /**
     * Retires every entry and closes the duplicates with nothing in flight (the component's
     * deactivation; a retired entry still in flight is closed by a later sweep, if any).
     */
    synchronized void close() {
        retireAll();
    }

    private void retireAll() {
        try (Arena arena = Arena.ofConfined()) {
            CallState cs = CallState.allocate(arena);
            for (Entry e : table) {
                if (e != null) {
                    retire(e, cs);
                }
            }
            closeRetired(cs);
        }
    }

    // ------------------------------------------------------------------ for tests and reports

    /** {@code fd}'s descriptors as the table has them now ({@code fd} first), or an empty array. Any thread. */
    int[] descriptorsOf(int fd) {
        Entry[] t = table;
        Entry e = fd < t.length ? (Entry) SLOT.getAcquire(t, fd) : null;
        return e == null ? new int[0] : e.descriptors.clone();
    }

    /** Duplicates open now, in the table and retired. */
    synchronized int open() {
        return open;
    }

    /** Entries made since the start. */
    synchronized long made() {
        return made;
    }

    /** Entries retired since the start (stale, evicted, a changed setting). */
    synchronized long retiredCount() {
        return retiredCount;
    }
}
