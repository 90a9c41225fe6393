package org.pageio.pgdata;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * A PostgreSQL cluster's {@code global/pg_control}: the fields of {@code ControlFileData}
 * ({@code catalog/pg_control.h}) that tell whether and how pageio may read the cluster's files, read
 * as {@code get_controlfile} ({@code common/controldata_utils.c}) reads them, CRC included.
 *
 * <p>Layout on a 64-bit little-endian machine (the offsets {@code pg_controldata} prints the values
 * of), the same in every version pageio reads up to {@code data_checksum_version}:
 * <pre>
 *   0 u64 system_identifier        8 u32 pg_control_version    12 u32 catalog_version_no
 *  16 u32 state (DBState)         24 i64 time                  32 u64 checkPoint
 *  40     checkPointCopy (CheckPoint, 88 bytes) … the settings at shutdown …
 * 204 u32 maxAlign               208 f64 floatFormat          216 u32 blcksz
 * 220 u32 relseg_size            224 u32 xlog_blcksz          228 u32 xlog_seg_size
 * 248 u8  float8ByVal            252 u32 data_checksum_version
 * 256     (PostgreSQL 18: bool default_char_signedness) mock_authentication_nonce[32]
 *         crc: a CRC-32C of every byte before it: at 288 (pg_control_version 1300: PostgreSQL 13 to 16;
 *         1700: PostgreSQL 17), at 292 (1800: PostgreSQL 18)
 * </pre>
 * The file is {@code PG_CONTROL_FILE_SIZE} = 8192 bytes, zero after the structure. A
 * {@code pg_control_version} pageio does not know is refused (its CRC could not even be located).
 *
 * @param systemIdentifier     {@code system_identifier}
 * @param pgControlVersion     {@code pg_control_version}: 1300, 1700 or 1800
 * @param catalogVersionNo     {@code catalog_version_no}, e.g. 202209061 for PostgreSQL 15
 * @param state                {@code state}, a {@code DBState} ({@link #DB_SHUTDOWNED}, …)
 * @param blcksz               {@code blcksz}: bytes per page
 * @param relsegSize           {@code relseg_size}: blocks per segment file ({@code RELSEG_SIZE})
 * @param dataChecksumVersion  {@code data_checksum_version}: 0 without data checksums, 1 with them
 */
public record ControlFile(long systemIdentifier, int pgControlVersion, int catalogVersionNo, int state, int blcksz,
        int relsegSize, int dataChecksumVersion) {

    /** {@code PG_CONTROL_FILE_SIZE}: the file's size. */
    public static final int PG_CONTROL_FILE_SIZE = 8192;
    /** {@code XLOG_CONTROL_FILE}: where it is under the data directory. */
    public static final String XLOG_CONTROL_FILE = "global/pg_control";

    /** {@code DBState}: {@code DB_STARTUP}. */
    public static final int DB_STARTUP = 0;
    /** {@code DB_SHUTDOWNED}: shut down cleanly. */
    public static final int DB_SHUTDOWNED = 1;
    /** {@code DB_SHUTDOWNED_IN_RECOVERY}: a standby shut down cleanly. */
    public static final int DB_SHUTDOWNED_IN_RECOVERY = 2;
    /** {@code DB_SHUTDOWNING}. */
    public static final int DB_SHUTDOWNING = 3;
    /** {@code DB_IN_CRASH_RECOVERY}. */
    public static final int DB_IN_CRASH_RECOVERY = 4;
    /** {@code DB_IN_ARCHIVE_RECOVERY}. */
    public static final int DB_IN_ARCHIVE_RECOVERY = 5;
    /** {@code DB_IN_PRODUCTION}: running, or stopped without a shutdown checkpoint (a crash, {@code pg_ctl stop -m immediate}). */
    public static final int DB_IN_PRODUCTION = 6;

    private static final int OFFSET_PG_CONTROL_VERSION = 8;
    private static final int OFFSET_CATALOG_VERSION_NO = 12;
    private static final int OFFSET_STATE = 16;
    private static final int OFFSET_BLCKSZ = 216;
    private static final int OFFSET_RELSEG_SIZE = 220;
    private static final int OFFSET_DATA_CHECKSUM_VERSION = 252;

    /** Whether data checksums are on ({@code data_checksum_version != 0}). */
    public boolean dataChecksums() {
        return dataChecksumVersion != 0;
    }

    /** Whether the cluster was shut down cleanly: {@link #DB_SHUTDOWNED} or {@link #DB_SHUTDOWNED_IN_RECOVERY}. */
    public boolean shutDownCleanly() {
        return state == DB_SHUTDOWNED || state == DB_SHUTDOWNED_IN_RECOVERY;
    }

    /** The state as {@code pg_controldata} names it ({@code dbState()}): {@code shut down}, {@code in production}, …. */
    public String stateName() {
        return stateName(state);
    }

    /** {@code pg_controldata}'s {@code dbState()}. */
    public static String stateName(int state) {
        return switch (state) {
            case DB_STARTUP -> "starting up";
            case DB_SHUTDOWNED -> "shut down";
            case DB_SHUTDOWNED_IN_RECOVERY -> "shut down in recovery";
            case DB_SHUTDOWNING -> "shutting down";
            case DB_IN_CRASH_RECOVERY -> "in crash recovery";
            case DB_IN_ARCHIVE_RECOVERY -> "in archive recovery";
            case DB_IN_PRODUCTION -> "in production";
            default -> "unrecognized status code " + state;
        };
    }

    /**
     * Reads {@code DIR/global/pg_control} as {@code get_controlfile} does and checks its CRC.
     *
     * @throws PgDataException naming the file and what is wrong: missing or unreadable, shorter
     *         than the structure ({@code could not read file "…": read N of M}), a
     *         {@code pg_control_version} pageio does not read, or a CRC that does not match
     *         ({@code pg_control CRC value is incorrect})
     */
    public static ControlFile read(Path dataDirectory) throws PgDataException {
        Path file = dataDirectory.resolve(XLOG_CONTROL_FILE);
        ByteBuffer b = ByteBuffer.allocate(PG_CONTROL_FILE_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            while (b.hasRemaining() && ch.read(b) > 0) {
                // read to the end or the file's size
            }
        } catch (NoSuchFileException e) {
            throw new PgDataException("could not open file \"" + file + "\" for reading: No such file or directory"
                    + " (is \"" + dataDirectory + "\" a PostgreSQL data directory?)");
        } catch (IOException e) {
            throw new PgDataException("could not read file \"" + file + "\": " + e.getMessage());
        }
        int read = b.position();
        if (read < OFFSET_PG_CONTROL_VERSION + 4) {
            throw new PgDataException("could not read file \"" + file + "\": read " + read + " of " + sizeOf(1300));
        }
        int version = b.getInt(OFFSET_PG_CONTROL_VERSION);
        int crcAt = crcOffset(version);
        if (crcAt < 0) {
            boolean byteOrder = version % 65536 == 0 && version / 65536 != 0;
            throw new PgDataException("cluster is not compatible with this version of pg_checksums: pg_control_version "
                    + version + " in \"" + file + "\" is not one pageio reads (1300: PostgreSQL 13 to 16, 1700: 17, 1800: 18)"
                    + (byteOrder ? "; possible byte ordering mismatch: the file may have been written on a machine of the"
                            + " other byte order" : ""));
        }
        if (read < sizeOf(version)) {
            throw new PgDataException("could not read file \"" + file + "\": read " + read + " of " + sizeOf(version));
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, crcAt);
        if ((int) crc.getValue() != b.getInt(crcAt)) {
            throw new PgDataException("pg_control CRC value is incorrect (file \"" + file + "\": calculated "
                    + String.format("%08X", (int) crc.getValue()) + ", stored " + String.format("%08X", b.getInt(crcAt)) + ")");
        }
        return new ControlFile(b.getLong(0), version, b.getInt(OFFSET_CATALOG_VERSION_NO), b.getInt(OFFSET_STATE),
                b.getInt(OFFSET_BLCKSZ), b.getInt(OFFSET_RELSEG_SIZE), b.getInt(OFFSET_DATA_CHECKSUM_VERSION));
    }

    /** {@code offsetof(ControlFileData, crc)} for a {@code pg_control_version}, or -1 for one pageio does not read. */
    static int crcOffset(int pgControlVersion) {
        return switch (pgControlVersion) {
            case 1300, 1700 -> 288;
            case 1800 -> 292;
            default -> -1;
        };
    }

    /** {@code sizeof(ControlFileData)}: the CRC's offset, its 4 bytes, aligned to 8. */
    private static int sizeOf(int pgControlVersion) {
        return (crcOffset(pgControlVersion) + 4 + 7) & ~7;
    }
}
