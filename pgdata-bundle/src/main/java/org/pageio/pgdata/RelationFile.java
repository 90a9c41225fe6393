package org.pageio.pgdata;

import java.nio.file.Path;
import org.pageio.bufmgr.smgr.ForkNumber;

/**
 * One segment file of a relation fork in a PostgreSQL cluster, as {@code pg_checksums}'
 * {@code scan_directory} finds it: its name parsed as {@code relfilenode[_fork][.segno]}.
 *
 * @param path         the file (under the data directory, or under a tablespace's location)
 * @param databaseDir  the directory that holds it: {@code global}, {@code base/<dboid>} or
 *                     {@code pg_tblspc/<spcoid>/PG_<major>_<catversion>/<dboid>}, relative to the data directory
 * @param relNumber    the relfilenode
 * @param fork         the fork ({@code _fsm}, {@code _vm}, {@code _init}; none: main)
 * @param segno        the segment number ({@code .1}, …; none: 0)
 * @param size         the file's size in bytes when it was listed
 */
public record RelationFile(Path path, String databaseDir, long relNumber, ForkNumber fork, int segno, long size) {

    /** The file as {@code pg_checksums} names it in messages: {@code DIR/base/5/16384.1}. */
    @Override
    public String toString() {
        return path.toString();
    }
}
