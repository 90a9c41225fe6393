package org.pageio.bufmgr.smgr;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.pageio.posix.CallState;

/**
 * The storage manager (PostgreSQL's smgr/md): relations as files of {@link #BLCKSZ}-byte blocks
 * split into segments of {@link #segmentBlocks()} blocks ({@code <relNumber>},
 * {@code <relNumber>.1}, …) in tablespace directories. The default tablespace is
 * {@code <data>/base}; others live under {@code <data>/pg_tblspc/<name>} unless given a
 * location.
 *
 * <p>Relation and tablespace names are validated so that no path built here leaves its
 * tablespace directory. The directories it creates are private ({@code 0700}, PostgreSQL's
 * {@code pg_dir_create_mode}), and it refuses a data directory that group or others can write
 * ({@link #checkPermissions}). Thread-safe.
 */
public final class StorageManager implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("org.pageio.bufmgr");

    /** Block size, PostgreSQL's BLCKSZ. */
    public static final int BLCKSZ = 8192;
    /** Default segment size in blocks: 1 GiB, PostgreSQL's RELSEG_SIZE. */
    public static final long DEFAULT_SEGMENT_BLOCKS = 131072;
    public static final String DEFAULT_TABLESPACE = "pg_default";

    /**
     * The sync epoch: a write records the epoch current when it completed; a sync takes the current
     * epoch and moves it on ({@link #nextSyncEpoch}) before its first fsync, so that every write
     * that recorded an epoch up to the one taken had returned before the fsync began and is covered
     * by it. Starts at 1 (0: never written).
     */
    private final java.util.concurrent.atomic.AtomicLong syncEpoch = new java.util.concurrent.atomic.AtomicLong(1);
    private final Path dataDirectory;
    private final long segmentBlocks;
    // Read by every segment open (under the relation's lock), written by setDirectIo before it walks
    // the open descriptors under the same locks; volatile: an open after the store sees the new mode.
    private volatile boolean directIo;
    /** Files are opened {@code O_RDONLY} and nothing is created, written or removed ({@link #readOnly}). */
    private final boolean readOnly;
    /** What a read completion checks on a page of these files. */
    private final ReadVerification readVerification;
    private final Map<String, Tablespace> tablespaces = new ConcurrentHashMap<>();
    /** A relation fork's key: forks of one relation are opened as objects (and ids) of their own. */
    private record ForkKey(RelFileLocator locator, ForkNumber fork) { }

    private final Map<ForkKey, SmgrRelation> relations = new ConcurrentHashMap<>();
    private final List<SmgrRelation> byId = new ArrayList<>();
    /**
     * {@link #byId} for lock-free lookups by id (write-back, the clock sweep): replaced, grown, under
     * {@code byId}'s lock; an entry is stored with release before the id is handed out, read with
     * acquire after the volatile read of the array.
     */
    private volatile SmgrRelation[] table = new SmgrRelation[16];
    private static final java.lang.invoke.VarHandle ENTRY = java.lang.invoke.MethodHandles.arrayElementVarHandle(SmgrRelation[].class);

    /**
     * @param dataDirectory the data directory; created if missing
     * @param segmentBlocks blocks per segment file (tests use small values to cross boundaries)
     * @param directIo      open relation files with O_DIRECT
     */
    /** The epoch a write that completes now records. Any thread; a volatile read. */
    public long currentEpoch() {
        return syncEpoch.get();
    }

    /** Before the fsyncs of a sync: returns the epoch its fsyncs cover (writes up to it), and moves on. */
    public long nextSyncEpoch() {
        return syncEpoch.getAndIncrement();
    }

    public StorageManager(Path dataDirectory, long segmentBlocks, boolean directIo) {
        this(dataDirectory, segmentBlocks, directIo, false, ReadVerification.PAGEIO);
    }

    private StorageManager(Path dataDirectory, long segmentBlocks, boolean directIo, boolean readOnly,
            ReadVerification readVerification) {
        if (segmentBlocks < 1 || segmentBlocks > DEFAULT_SEGMENT_BLOCKS * 64) {
            throw new IllegalArgumentException("segment size " + segmentBlocks + " blocks is out of range: valid values are 1.."
                    + DEFAULT_SEGMENT_BLOCKS * 64);
        }
        this.dataDirectory = dataDirectory.toAbsolutePath().normalize();
        this.segmentBlocks = segmentBlocks;
        this.directIo = directIo;
        this.readOnly = readOnly;
        this.readVerification = readVerification;
        if (readOnly) {
            requireDirectory(this.dataDirectory, "directory", "");
            tablespaces.put(DEFAULT_TABLESPACE, new Tablespace(DEFAULT_TABLESPACE, this.dataDirectory.resolve("base"),
                    Tablespace.INHERIT, Tablespace.INHERIT));
            return;
        }
        createDataDirectory(this.dataDirectory);
        checkPermissions(this.dataDirectory);
        Path base = this.dataDirectory.resolve("base");
        createDirectories(base);
        tablespaces.put(DEFAULT_TABLESPACE, new Tablespace(DEFAULT_TABLESPACE, base, Tablespace.INHERIT, Tablespace.INHERIT));
    }

    /**
     * A storage manager over files pageio reads and never changes, such as a stopped PostgreSQL
     * cluster's: segment files are opened {@code O_RDONLY}; nothing is created (not the directory,
     * not {@code base/}, not a tablespace's directory, not a file); a write, an extension, a creation
     * or an unlink of one of its relations is refused naming the file
     * ({@code open for writing … EROFS … opened read-only}). The directory's permissions are not
     * checked (they are its owner's business; reading them is enough). Read its files through a
     * buffer pool on it ({@code BufferManagerCore.on}) as any other relation's.
     *
     * @param directory       an existing directory; relation files live in tablespace directories
     *                        given by {@link #createTablespace} (an absolute location, which must exist)
     * @param segmentBlocks   blocks per segment file (PostgreSQL's {@code RELSEG_SIZE} of the cluster)
     * @param readVerification what a read completion checks on each page ({@link ReadVerification#NONE}:
     *                        nothing; the reader checks)
     * @throws IllegalArgumentException when the directory does not exist or the segment size is out of range
     * @since 1.6.0
     */
    public static StorageManager readOnly(Path directory, long segmentBlocks, ReadVerification readVerification) {
        return new StorageManager(directory, segmentBlocks, false, true, java.util.Objects.requireNonNull(readVerification));
    }

    /** A read-only storage manager creates no directory: {@code dir} ({@code what} names it) must exist. */
    private static void requireDirectory(Path dir, String what, String note) {
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException(what + " \"" + dir + "\" " + (Files.exists(dir) ? "is not a directory" : "does not exist")
                    + note);
        }
    }

    /**
     * Whether this storage manager only reads ({@link #readOnly}).
     *
     * @since 1.6.0
     */
    public boolean readOnly() {
        return readOnly;
    }

    /**
     * What the buffer manager's read completion checks on a page read from these files:
     * {@link ReadVerification#PAGEIO} for pageio's own data directory.
     *
     * @since 1.6.0
     */
    public ReadVerification readVerification() {
        return readVerification;
    }

    public Path dataDirectory() {
        return dataDirectory;
    }

    public long segmentBlocks() {
        return segmentBlocks;
    }

    public boolean directIo() {
        return directIo;
    }

    /**
     * Switches the storage manager to O_DIRECT or back: segments opened from now on, and every
     * descriptor open now ({@code fcntl(F_SETFL)}), take the new mode before this returns. Called by
     * the buffer manager when a method that bypasses the page cache is swapped in, <em>before</em>
     * the method is published, and when it is swapped out, <em>after</em> the buffered method is
     * published ({@code BufferManagerCore#swapMethod}): so a method that bypasses the page cache is
     * never handed a buffered descriptor, while a buffered method may briefly read through O_DIRECT
     * ones (the pool's I/O is aligned; the bytes are the same, only uncached).
     *
     * <p>A descriptor whose file system refuses O_DIRECT stays buffered: one WARNING names the file,
     * the file system and the way out, and the method refuses the I/O on it as it would at open.
     * Does not flush: a method that bypasses the page cache flushes a descriptor before its first
     * direct read (a storage-manager fdatasync here would consume a write-back error the next
     * checkpoint's fsync must see). Any thread; one switch at a time (the buffer manager's swap).
     */
    public void setDirectIo(boolean directIo) {
        this.directIo = directIo; // volatile: every open from now on sees it (opens take the relation's lock)
        List<SmgrRelation> all = relations();
        try (Arena a = Arena.ofConfined()) {
            CallState cs = CallState.allocate(a);
            for (SmgrRelation r : all) {
                for (String refused : r.switchDirect(cs, directIo)) {
                    LOG.log(System.Logger.Level.WARNING, refused);
                }
            }
        }
    }

    /**
     * Creates (or redefines the overrides of) a tablespace. With {@code location == null} it lives
     * in {@code <data>/pg_tblspc/<name>}; a location must be an absolute path an administrator
     * chose (other storage), as in PostgreSQL's {@code CREATE TABLESPACE … LOCATION}.
     */
    public Tablespace createTablespace(String name, Path location, int effectiveIoConcurrency, int maintenanceIoConcurrency) {
        Tablespace.checkName(name);
        Path dir;
        if (location == null) {
            dir = dataDirectory.resolve("pg_tblspc").resolve(name);
        } else if (!location.isAbsolute()) {
            throw new IllegalArgumentException("tablespace location \"" + location + "\" must be an absolute path");
        } else {
            dir = location;
        }
        if (readOnly) {
            requireDirectory(dir, "tablespace \"" + name + "\": directory", " (read-only: nothing is created)");
        } else {
            createDirectories(dir);
        }
        Tablespace ts = new Tablespace(name, dir, effectiveIoConcurrency, maintenanceIoConcurrency);
        tablespaces.put(name, ts);
        return ts;
    }

    /** The tablespace of that name; fails naming the known ones if there is none. */
    public Tablespace tablespace(String name) {
        Tablespace ts = tablespaces.get(name);
        if (ts == null) {
            throw new IllegalArgumentException("tablespace \"" + name + "\" does not exist; known: " + tablespaces.keySet());
        }
        return ts;
    }

    /**
     * The relation's storage handle, its main fork (files are opened lazily, created by
     * {@link SmgrRelation#create()}).
     */
    public SmgrRelation open(RelFileLocator locator) {
        return open(locator, ForkNumber.MAIN_FORKNUM);
    }

    /**
     * A fork of the relation: an {@link SmgrRelation} of its own, with an id of its own (buffer tags
     * store ids, so the fork's buffers are told apart from the main fork's), opened once and kept,
     * like every relation, while this storage manager runs (ids are not reused). Opening another
     * fork opens the main fork first, which then knows it (to unlink it and drop its buffers).
     *
     * @since 1.5.0
     */
    public SmgrRelation open(RelFileLocator locator, ForkNumber fork) {
        ForkKey key = new ForkKey(locator, fork);
        SmgrRelation r = relations.get(key);
        if (r != null) {
            return r;
        }
        synchronized (byId) {
            r = relations.get(key);
            if (r == null) {
                SmgrRelation main = fork == ForkNumber.MAIN_FORKNUM ? null : open(locator);
                if (byId.size() >= SmgrRelation.MAX_RELATIONS) {
                    throw new IllegalStateException("too many open relations (" + byId.size() + ")");
                }
                r = new SmgrRelation(this, byId.size(), locator, fork, tablespace(locator.tablespace()));
                SmgrRelation[] t = table;
                if (r.id() >= t.length) {
                    t = java.util.Arrays.copyOf(t, t.length * 2);
                }
                ENTRY.setRelease(t, r.id(), r);
                table = t; // volatile: a grown array is published after its entries
                byId.add(r);
                relations.put(key, r);
                if (main != null) {
                    main.addFork(r);
                }
            }
            return r;
        }
    }

    /**
     * The relation with this small id (buffer tags store ids, not objects). Any thread; no lock:
     * a volatile read and an acquiring one.
     *
     * @throws IndexOutOfBoundsException when no relation has that id
     */
    public SmgrRelation relation(int id) {
        SmgrRelation[] t = table;
        SmgrRelation r = id >= 0 && id < t.length ? (SmgrRelation) ENTRY.getAcquire(t, id) : null;
        if (r == null) {
            throw new IndexOutOfBoundsException("no relation has id " + id);
        }
        return r;
    }

    /** Every relation opened so far (a snapshot; the checkpointer walks it for fsync requests). */
    public List<SmgrRelation> relations() {
        synchronized (byId) {
            return new ArrayList<>(byId);
        }
    }

    /** Closes every open file. */
    @Override
    public void close() {
        List<SmgrRelation> all;
        synchronized (byId) {
            all = new ArrayList<>(byId);
        }
        for (SmgrRelation r : all) {
            r.close();
        }
    }

    /** {@code rwx------}: what every directory created here gets (the umask can only take more away). */
    private static final FileAttribute<Set<PosixFilePermission>> PRIVATE_DIRECTORY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

    /**
     * Refuses a data directory that group or others can write, as PostgreSQL refuses one whose mode
     * is not 0700 or 0750: anyone who can write it can replace or remove relation files, the
     * settings file and the Web Console's password file. Read access for group or others (0750,
     * 0755) is allowed: it exposes the data, not its integrity, and data directories created before
     * pageio made them private are 0755.
     *
     * @throws IllegalStateException naming the directory, its mode and the fix ({@code chmod 700 DIR})
     */
    public static void checkPermissions(Path dataDirectory) {
        Set<PosixFilePermission> p;
        try {
            p = Files.getPosixFilePermissions(dataDirectory);
        } catch (UnsupportedOperationException e) {
            return; // not a POSIX file system: nothing to check
        } catch (IOException e) {
            throw new UncheckedIOException("could not read the permissions of the data directory " + dataDirectory + ": " + e, e);
        }
        if (p.contains(PosixFilePermission.GROUP_WRITE) || p.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new IllegalStateException("data directory \"" + dataDirectory + "\" has invalid permissions ("
                    + PosixFilePermissions.toString(p) + "): group or others can write it, and so replace its files;"
                    + " it should be rwx------ (0700) or rwxr-x--- (0750): run chmod 700 " + dataDirectory);
        }
    }

    /**
     * The data directory itself: its last level only, as initdb creates it; a missing parent is
     * refused in one line rather than a tree grown from the root.
     */
    private static void createDataDirectory(Path dir) {
        Path parent = dir.getParent();
        if (!Files.isDirectory(dir) && parent != null && !Files.isDirectory(parent)) {
            String why = "cannot create the data directory " + dir + ": its parent " + parent
                    + (Files.exists(parent) ? " is not a directory" : " does not exist")
                    + "; create it first or point pageio.data (./pageio --data DIR) at another directory";
            throw new UncheckedIOException(why, new IOException(why));
        }
        createDirectories(dir);
    }

    private static void createDirectories(Path dir) {
        try {
            Files.createDirectories(dir, PRIVATE_DIRECTORY);
        } catch (IOException e) {
            throw new UncheckedIOException("could not create directory " + dir + ": " + e.getClass().getSimpleName()
                    + (e.getMessage() == null || e.getMessage().equals(dir.toString()) ? "" : " " + e.getMessage())
                    + "; the data directory must be a directory this user can write: point pageio.data"
                    + " (./pageio --data DIR) at one", e);
        }
    }
}
