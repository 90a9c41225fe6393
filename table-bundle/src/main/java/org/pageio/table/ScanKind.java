package org.pageio.table;

/** The scans pageio runs, with the read-stream flags each uses (docs/postgresql.md, "Read streams"). */
public enum ScanKind {
    /** {@code SELECT count(*) FROM t}: sequential scan, SEQUENTIAL|USE_BATCHING, bulk-read ring. */
    COUNT("count"),
    /** {@code SELECT count(*) FROM t WHERE text LIKE '%p%'}: sequential scan with a filter, as COUNT. */
    FILTER("filter"),
    /** {@code count(*) WHERE col BETWEEN lo AND hi} by bitmap heap scan: sorted blocks, DEFAULT|USE_BATCHING. */
    BITMAP("bitmap"),
    /** {@code count(*), sum(length(text)) WHERE col BETWEEN lo AND hi} by index scan: heap blocks in index order, DEFAULT|USE_BATCHING. */
    INDEX("index"),
    /** {@code SELECT * WHERE col >= lo ORDER BY col LIMIT n}: an index scan whose stream ends early. */
    LIMIT("limit"),
    /**
     * {@code count(*) WHERE [c1 = x AND] col BETWEEN lo AND hi} by index-only scan: the index's
     * entries, the heap read only for blocks the visibility map does not mark all-visible.
     */
    IOS("ios"),
    /** Every page's checksum and header ({@code pg_checksums --check}): MAINTENANCE|SEQUENTIAL|USE_BATCHING. */
    CHECKSUMS("checksums");

    private final String word;

    ScanKind(String word) {
        this.word = word;
    }

    public String word() {
        return word;
    }

    public static ScanKind byWord(String w) {
        for (ScanKind k : values()) {
            if (k.word.equals(w)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown scan \"" + w + "\": use count, filter, bitmap, index, limit, ios or checksums");
    }
}
