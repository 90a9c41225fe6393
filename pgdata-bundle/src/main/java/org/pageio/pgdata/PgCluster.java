package org.pageio.pgdata;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManagerCore;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.smgr.ForkNumber;
import org.pageio.bufmgr.smgr.ReadVerification;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.smgr.Tablespace;

/**
 * A stopped PostgreSQL cluster opened read-only: its control file ({@link ControlFile}), its
 * relation files as {@code pg_checksums} finds them ({@link #relationFiles()}), and a read-only
 * storage manager over them ({@link StorageManager#readOnly}, pages as stored:
 * {@link ReadVerification#NONE}) through which a buffer pool reads them
 * ({@link #openBufferManager}). Nothing in the cluster is created, written or removed.
 *
 * <p><b>Opening</b> checks what {@code pg_checksums} checks before it reads a page, in its order
 * and with its words: the control file and its CRC, a {@code pg_control_version} pageio reads
 * (PostgreSQL 15 to 18), {@code blcksz} = 8192 ({@code database cluster is not compatible}), and a
 * clean shutdown ({@code cluster must be shut down}: {@code state} is {@code DB_SHUTDOWNED} or
 * {@code DB_SHUTDOWNED_IN_RECOVERY}). pageio also refuses a data directory with a
 * {@code postmaster.pid} (a server starting or running: its pages change under the reader; a crash
 * leaves the file too, and the state then says "in production"), which {@code pg_checksums} does
 * not look at. Whether data checksums are on is the caller's question ({@link ControlFile#dataChecksums}).
 *
 * <p><b>Relations.</b> A database directory ({@code global}, {@code base/<dboid>},
 * {@code pg_tblspc/<spcoid>/PG_<major>_<catversion>/<dboid>}) is a tablespace of the storage manager
 * ({@code pg_global}, {@code base_<dboid>}, {@code tblspc_<spcoid>_<dboid>}); a relation fork is an
 * {@link SmgrRelation} of it, whose segment {@code n} is the file {@code <relfilenode>[_fork].n}, as
 * in PostgreSQL. {@link #relation(String)} opens one by the path {@code pg_relation_filepath()}
 * prints. Relations stay open until {@link #close}; a reader that walks many may close each one's
 * files ({@link SmgrRelation#close()}) when done with it.
 *
 * <p>Thread-safe (the storage manager is); the cluster must stay stopped while it is read.
 */
public final class PgCluster implements AutoCloseable {

    /** {@code PG_TEMP_FILE_PREFIX} and {@code PG_TEMP_FILES_DIR}: temporary files and directories, skipped. */
    static final String PG_TEMP_FILE_PREFIX = "pgsql_tmp";

    /**
     * {@code pg_checksums}' {@code skip[]}: files that are not relation files. A name matches when it
     * is the entry's name, or, for a prefix entry, starts with it ({@code pg_internal.init.123}).
     */
    private static final List<Skip> SKIP = List.of(
            new Skip("pg_control", false),
            new Skip("pg_filenode.map", false),
            new Skip("pg_internal.init", true),
            new Skip("PG_VERSION", false),
            new Skip("config_exec_params", true));

    private record Skip(String name, boolean matchPrefix) {
    }

    private final Path directory;
    private final ControlFile control;
    private final String tablespaceVersionDirectory;
    private final StorageManager storage;
    /** Database directory (relative, as in {@link RelationFile#databaseDir()}) → tablespace name, registered once. */
    private final Map<String, String> tablespaces = new ConcurrentHashMap<>();

    private PgCluster(Path directory, ControlFile control, String tablespaceVersionDirectory) {
        this.directory = directory;
        this.control = control;
        this.tablespaceVersionDirectory = tablespaceVersionDirectory;
        this.storage = StorageManager.readOnly(directory, control.relsegSize(), ReadVerification.NONE);
    }

    /**
     * Opens the cluster in {@code dataDirectory} read-only, after the checks in the class comment.
     *
     * @throws PgDataException with {@code pg_checksums}' message for a refusal, or naming the file
     *         that could not be read
     */
    public static PgCluster open(Path dataDirectory) throws PgDataException {
        if (!Files.isDirectory(dataDirectory)) {
            throw new PgDataException("could not open directory \"" + dataDirectory + "\": "
                    + (Files.exists(dataDirectory) ? "Not a directory" : "No such file or directory"));
        }
        ControlFile control = ControlFile.read(dataDirectory);
        if (control.blcksz() != StorageManager.BLCKSZ) {
            throw new PgDataException("database cluster is not compatible: the database cluster was initialized with block size "
                    + control.blcksz() + ", but pageio reads block size " + StorageManager.BLCKSZ);
        }
        if (!control.shutDownCleanly()) {
            throw new PgDataException("cluster must be shut down (database cluster state: " + control.stateName()
                    + (control.state() == ControlFile.DB_IN_PRODUCTION ? "; running, or stopped without a clean shutdown" : "")
                    + ")");
        }
        Path pid = dataDirectory.resolve("postmaster.pid");
        if (Files.exists(pid, LinkOption.NOFOLLOW_LINKS)) {
            throw new PgDataException("cluster must be shut down (\"" + pid + "\" exists: a server is starting or running)");
        }
        if (control.relsegSize() < 1) {
            throw new PgDataException("relseg_size " + Integer.toUnsignedString(control.relsegSize()) + " in \""
                    + dataDirectory.resolve(ControlFile.XLOG_CONTROL_FILE) + "\" is out of range");
        }
        return new PgCluster(dataDirectory, control, "PG_" + majorVersion(dataDirectory) + "_" + control.catalogVersionNo());
    }

    /** The major version in {@code PG_VERSION} ({@code 15}), which names tablespace version directories. */
    private static String majorVersion(Path dataDirectory) throws PgDataException {
        Path file = dataDirectory.resolve("PG_VERSION");
        try {
            String v = Files.readString(file).strip();
            if (!v.matches("\\d{1,3}")) {
                throw new PgDataException("file \"" + file + "\" does not hold a PostgreSQL major version (\"" + v + "\")");
            }
            return v;
        } catch (IOException e) {
            if (e instanceof PgDataException p) {
                throw p;
            }
            throw new PgDataException("could not read file \"" + file + "\": " + e.getMessage());
        }
    }

    /** The data directory, as given. */
    public Path directory() {
        return directory;
    }

    public ControlFile controlFile() {
        return control;
    }

    /** {@code TABLESPACE_VERSION_DIRECTORY}: {@code PG_<major>_<catversion>}, e.g. {@code PG_15_202209061}. */
    public String tablespaceVersionDirectory() {
        return tablespaceVersionDirectory;
    }

    /** The read-only storage manager over the cluster's files ({@link ReadVerification#NONE}). */
    public StorageManager storage() {
        return storage;
    }

    /**
     * A buffer manager over the cluster's files: its own pool ({@code settings}' {@code shared_buffers})
     * on an AIO context of {@code method}; the segment size is the cluster's {@code relseg_size}.
     * Pages enter its buffers as stored (nothing zeroed or refused); the caller checks them. Close it
     * before the cluster.
     */
    public BufferManagerCore openBufferManager(IoMethod method, BufMgrSettings settings) {
        if (method.bypassesPageCache() != storage.directIo()) {
            storage.setDirectIo(method.bypassesPageCache()); // such a method is never handed a buffered descriptor
        }
        return BufferManagerCore.on(storage, settings.toBuilder().segmentBlocks(control.relsegSize()).build(), method);
    }

    /**
     * Refuses a pool that does not read this cluster's storage manager (one opened with
     * {@link #openBufferManager}): its pages would be another directory's.
     *
     * @throws IllegalArgumentException for such a pool
     */
    void requireOwnPool(BufferPool pool) {
        if (pool.storage() != storage) {
            throw new IllegalArgumentException("the pool does not read this cluster: open it with PgCluster.openBufferManager");
        }
    }

    /**
     * The fork of {@code file}'s relation, opened on the storage manager: its segment
     * {@code file.segno()} is {@code file}.
     */
    public SmgrRelation relation(RelationFile file) {
        return storage.open(new RelFileLocator(tablespace(file.databaseDir()), file.relNumber()), file.fork());
    }

    /**
     * The main fork of the relation whose file is {@code relationFilepath}, the path
     * {@code pg_relation_filepath()} prints: {@code base/5/16384}, {@code global/1262},
     * {@code pg_tblspc/16385/PG_15_202209061/5/16386}.
     *
     * @throws IllegalArgumentException when the path is not of that form or its directory does not exist
     */
    public SmgrRelation relation(String relationFilepath) {
        return relation(relationFilepath, ForkNumber.MAIN_FORKNUM);
    }

    /**
     * The fork {@code fork} of the relation whose main fork's file is {@code relationFilepath}
     * ({@link #relation(String)}): {@code VISIBILITYMAP_FORKNUM} of {@code base/5/16384} is the file
     * {@code base/5/16384_vm}.
     *
     * @throws IllegalArgumentException when the path is not of that form
     */
    public SmgrRelation relation(String relationFilepath, ForkNumber fork) {
        String[] parts = relationFilepath.split("/");
        String name = parts[parts.length - 1];
        String dir = relationFilepath.substring(0, Math.max(0, relationFilepath.length() - name.length() - 1));
        boolean shape = switch (parts.length) {
            case 2 -> parts[0].equals("global");
            case 3 -> parts[0].equals("base") && parts[1].matches("\\d+");
            case 5 -> parts[0].equals("pg_tblspc") && parts[1].matches("\\d+") && parts[2].equals(tablespaceVersionDirectory)
                    && parts[3].matches("\\d+");
            default -> false;
        };
        if (!shape || !isRelNumber(name)) {
            throw new IllegalArgumentException("\"" + relationFilepath + "\" is not a relation's path as pg_relation_filepath()"
                    + " prints it: global/RELFILENODE, base/DBOID/RELFILENODE or pg_tblspc/SPCOID/" + tablespaceVersionDirectory
                    + "/DBOID/RELFILENODE");
        }
        return storage.open(new RelFileLocator(tablespace(dir), Long.parseLong(name)), fork);
    }

    /** The storage manager's tablespace for a database directory, registered on first use. */
    private String tablespace(String databaseDir) {
        return tablespaces.computeIfAbsent(databaseDir, d -> {
            String[] p = d.split("/");
            String name = switch (p[0]) {
                case "global" -> "pg_global";
                case "base" -> "base_" + p[1];
                default -> "tblspc_" + p[1] + "_" + p[3];
            };
            storage.createTablespace(name, directory.toAbsolutePath().resolve(d), Tablespace.INHERIT, Tablespace.INHERIT);
            return name;
        });
    }

    /**
     * Every relation file {@code pg_checksums --check} reads, in its order: {@code scan_directory}
     * over {@code global}, {@code base} and {@code pg_tblspc} (each tablespace link followed into its
     * {@code PG_<major>_<catversion>} directory), directories recursed, and of the regular files
     * those that are not temporary ({@code pgsql_tmp*}, and {@code pgsql_tmp} directories), not
     * {@code .DS_Store} and not in {@code skip[]} ({@code pg_control}, {@code pg_filenode.map},
     * {@code pg_internal.init*}, {@code PG_VERSION}, {@code config_exec_params*}). Within a directory
     * the names are sorted (pg_checksums takes {@code readdir}'s order; the files are the same).
     *
     * @throws PgDataException naming the file for a name that is not {@code relfilenode[_fork][.segno]}
     *         (pg_checksums would read it as a relation file; pageio refuses to guess), a segment
     *         number 0 ({@code invalid segment number 0 in file name}), or a tablespace link without
     *         its version directory; an {@link IOException} naming the directory that could not be read
     */
    public List<RelationFile> relationFiles() throws IOException {
        List<RelationFile> files = new ArrayList<>();
        for (String top : List.of("global", "base", "pg_tblspc")) {
            scanDirectory(top, files);
        }
        return files;
    }

    /** {@code scan_directory(DataDir, subdir)}. */
    private void scanDirectory(String subdir, List<RelationFile> files) throws IOException {
        Path path = directory.resolve(subdir);
        List<Path> entries = new ArrayList<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(path)) {
            dir.forEach(entries::add);
        } catch (IOException e) {
            throw new PgDataException("could not open directory \"" + path + "\": " + e.getMessage());
        }
        entries.sort(null);
        for (Path entry : entries) {
            String name = entry.getFileName().toString();
            if (name.startsWith(PG_TEMP_FILE_PREFIX) || name.equals(".DS_Store")) {
                continue;
            }
            BasicFileAttributes st;
            try {
                st = Files.readAttributes(entry, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (IOException e) {
                throw new PgDataException("could not stat file \"" + entry + "\": " + e.getMessage());
            }
            if (st.isRegularFile()) {
                if (skipFile(name)) {
                    continue;
                }
                files.add(parse(entry, subdir, name, st.size()));
            } else if (st.isDirectory() || st.isSymbolicLink()) {
                if (subdir.equals("pg_tblspc")) {
                    // a tablespace: only its TABLESPACE_VERSION_DIRECTORY is this cluster's
                    Path version = entry.resolve(tablespaceVersionDirectory);
                    if (!Files.isDirectory(version)) {
                        throw new PgDataException("could not stat file \"" + version + "\": No such file or directory"
                                + " (tablespace " + name + " has no directory of this cluster's version)");
                    }
                    scanDirectory(subdir + "/" + name + "/" + tablespaceVersionDirectory, files);
                } else {
                    scanDirectory(subdir + "/" + name, files);
                }
            }
        }
    }

    /** {@code skipfile()}: an entry of {@code skip[]} matches the whole name, or its start for a prefix entry. */
    static boolean skipFile(String name) {
        for (Skip s : SKIP) {
            if (s.matchPrefix() ? name.startsWith(s.name()) : name.equals(s.name())) {
                return true;
            }
        }
        return false;
    }

    /** A file name cut as {@code scan_directory} cuts it: {@code .segno}, then {@code _fork}, the rest the relfilenode. */
    private RelationFile parse(Path file, String subdir, String name, long size) throws PgDataException {
        String rest = name;
        int segno = 0;
        int dot = rest.indexOf('.');
        if (dot >= 0) {
            String seg = rest.substring(dot + 1);
            rest = rest.substring(0, dot);
            if (!seg.matches("\\d{1,9}")) {
                throw notRelationFile(file);
            }
            segno = Integer.parseInt(seg);
            if (segno == 0) {
                throw new PgDataException("invalid segment number 0 in file name \"" + file + "\"");
            }
        }
        ForkNumber fork = ForkNumber.MAIN_FORKNUM;
        int underscore = rest.indexOf('_');
        if (underscore >= 0) {
            fork = ForkNumber.byName(rest.substring(underscore + 1));
            rest = rest.substring(0, underscore);
            if (fork == null || fork == ForkNumber.MAIN_FORKNUM) {
                throw notRelationFile(file);
            }
        }
        if (!isRelNumber(rest)) {
            throw notRelationFile(file);
        }
        return new RelationFile(file, subdir, Long.parseLong(rest), fork, segno, size);
    }

    /** Whether {@code s} is a {@code RelFileNumber} in decimal: 1 to 2^32 - 1 ({@code InvalidRelFileNumber} is 0). */
    private static boolean isRelNumber(String s) {
        return s.matches("\\d{1,10}") && Long.parseLong(s) != 0 && Long.parseLong(s) <= 0xFFFF_FFFFL;
    }

    private static PgDataException notRelationFile(Path file) {
        return new PgDataException("file \"" + file + "\" is not a relation file (its name is not relfilenode[_fork][.segno]"
                + " and it is not one pg_checksums skips): pageio does not read it as one");
    }

    /** Closes the storage manager (every file it opened). */
    @Override
    public void close() {
        storage.close();
    }
}
