package org.pageio.bufmgr.smgr;

/**
 * Which files hold a relation: its tablespace and relation number (PostgreSQL's
 * {@code RelFileLocator}, without the database level). Immutable; any thread.
 *
 * @param tablespace the tablespace's name ({@link StorageManager#DEFAULT_TABLESPACE} by default)
 * @param relNumber  the relation number, which names the files: {@code <relNumber>}, {@code <relNumber>.1}, …
 */
public record RelFileLocator(String tablespace, long relNumber) {

    public RelFileLocator {
        Tablespace.checkName(tablespace);
        if (relNumber <= 0 || relNumber > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("relation number " + relNumber + " is out of range: valid values are 1.."
                    + 0xFFFF_FFFFL);
        }
    }

    @Override
    public String toString() {
        return tablespace + "/" + relNumber;
    }
}
