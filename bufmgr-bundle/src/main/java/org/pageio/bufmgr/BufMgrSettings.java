package org.pageio.bufmgr;

import org.pageio.api.AioConfig;
import org.pageio.bufmgr.smgr.StorageManager;

/**
 * The buffer manager's settings, with PostgreSQL's names, defaults and ranges. Immutable; any
 * thread. Sizes are in blocks of 8 KiB ({@code shared_buffers} 16384 = 128 MB).
 *
 * @param sharedBuffers            {@code shared_buffers}, 16..2^27 blocks (1 TB); default 16384 (128 MB)
 * @param maxSessions              session slots (PostgreSQL's process slots), 1..4096; default 64
 * @param ioMaxConcurrency         {@code io_max_concurrency}, -1 (auto) or 1..1024
 * @param ioMaxCombineLimit        {@code io_max_combine_limit}, 1..128 blocks; default 16 (128 kB)
 * @param ioCombineLimit           {@code io_combine_limit}, 1..128 blocks; default 16; capped at the max
 * @param effectiveIoConcurrency   {@code effective_io_concurrency}, 0..1000; default 16
 * @param maintenanceIoConcurrency {@code maintenance_io_concurrency}, 0..1000; default 16
 * @param zeroDamagedPages         {@code zero_damaged_pages}: zero a damaged page, warn, go on
 * @param ignoreChecksumFailure    {@code ignore_checksum_failure}: warn and use a page whose checksum fails
 * @param trackIoTiming            {@code track_io_timing}: time reads and waits for stat_io
 * @param readStreamLookahead      {@code read_stream_lookahead}: PostgreSQL 18's or 19's look-ahead
 * @param dataChecksums            pages carry checksums that reads verify
 * @param segmentBlocks            blocks per segment file (1 GiB = 131072; small in tests)
 * @param directIo                 open relation files with O_DIRECT
 * @param registeredBuffers        offer the pool's pages to the I/O method to register with the kernel
 *                                 (io_uring's fixed buffers: no per-I/O page mapping); default on
 * @param hugePages                {@code huge_pages}: back the pool's pages with 2 MB pages; default try
 * @param readStreamPolicy         {@code read_stream_policy}: PostgreSQL's look-ahead alone, or with pageio's
 *                                 look-ahead policies (the default)
 */
public record BufMgrSettings(int sharedBuffers, int maxSessions, int ioMaxConcurrency, int ioMaxCombineLimit,
        int ioCombineLimit, int effectiveIoConcurrency, int maintenanceIoConcurrency, boolean zeroDamagedPages,
        boolean ignoreChecksumFailure, boolean trackIoTiming, Lookahead readStreamLookahead, boolean dataChecksums,
        long segmentBlocks, boolean directIo, boolean registeredBuffers, HugePages hugePages,
        ReadStreamPolicy readStreamPolicy) {

    /** Which read-stream look-ahead algorithm to use (docs/postgresql.md, "Read streams"). */
    public enum Lookahead {
        /** One distance: doubles after a read that needed I/O, decays by one on a hit. */
        PG18,
        /** Separate read-ahead and combine distances; read-ahead grows only on waits; decay hold-off. */
        PG19
    }

    /**
     * {@code read_stream_policy} (pageio's): whether a read stream runs PostgreSQL's look-ahead alone or
     * with pageio's look-ahead policies (bufmgr-bundle/README.md, "pageio's look-ahead policies").
     */
    public enum ReadStreamPolicy {
        /** PostgreSQL's look-ahead plus the policies where they apply (the default). */
        PAGEIO,
        /** read_stream.c's look-ahead only: no policy steps in. */
        POSTGRESQL;

        /** The setting's value: {@code pageio} or {@code postgresql}. */
        public String value() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        /** {@code pageio} or {@code postgresql} (any case); otherwise an error naming the setting and the valid values. */
        public static ReadStreamPolicy parse(String value) {
            for (ReadStreamPolicy p : values()) {
                if (p.value().equalsIgnoreCase(value == null ? "" : value.trim())) {
                    return p;
                }
            }
            throw new IllegalArgumentException("read_stream_policy = '" + value + "' is not valid: valid values are pageio, postgresql");
        }
    }

    /**
     * PostgreSQL's {@code huge_pages}, for the buffer pool's pages (Linux transparent huge pages of
     * 2 MB; see {@link BufferPool#hugePages()}).
     */
    public enum HugePages {
        /** Ask for huge pages; use normal pages for what the kernel does not give (the default). */
        TRY,
        /** Huge pages for the whole pool, or the pool does not start. */
        ON,
        /** Normal 4 kB pages only, even where the kernel would use huge pages for all memory. */
        OFF;

        /** The setting's value as PostgreSQL spells it: {@code try}, {@code on}, {@code off}. */
        public String value() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        /** {@code try}, {@code on} or {@code off} (any case); otherwise an error naming the setting and the valid values. */
        public static HugePages parse(String value) {
            for (HugePages h : values()) {
                if (h.value().equalsIgnoreCase(value == null ? "" : value.trim())) {
                    return h;
                }
            }
            throw new IllegalArgumentException("huge_pages = '" + value + "' is not valid: valid values are try, on, off");
        }
    }

    public BufMgrSettings {
        check("shared_buffers", sharedBuffers, 16, 1 << 27);
        check("max_sessions", maxSessions, 1, 4096);
        if (ioMaxConcurrency != AioConfig.AUTO) {
            check("io_max_concurrency", ioMaxConcurrency, 1, AioConfig.MAX_CONCURRENCY);
        }
        check("io_max_combine_limit", ioMaxCombineLimit, 1, AioConfig.MAX_COMBINE_LIMIT);
        check("io_combine_limit", ioCombineLimit, 1, AioConfig.MAX_COMBINE_LIMIT);
        check("effective_io_concurrency", effectiveIoConcurrency, 0, 1000);
        check("maintenance_io_concurrency", maintenanceIoConcurrency, 0, 1000);
        if (readStreamLookahead == null) {
            throw new IllegalArgumentException("read_stream_lookahead must be pg18 or pg19");
        }
        if (hugePages == null) {
            throw new IllegalArgumentException("huge_pages must be try, on or off");
        }
        if (readStreamPolicy == null) {
            throw new IllegalArgumentException("read_stream_policy must be pageio or postgresql");
        }
        if (segmentBlocks < 1) {
            throw new IllegalArgumentException("segment size " + segmentBlocks + " blocks is out of range: at least 1");
        }
    }

    /** The 2.2 constructor: {@code read_stream_policy = pageio}. */
    public BufMgrSettings(int sharedBuffers, int maxSessions, int ioMaxConcurrency, int ioMaxCombineLimit,
            int ioCombineLimit, int effectiveIoConcurrency, int maintenanceIoConcurrency, boolean zeroDamagedPages,
            boolean ignoreChecksumFailure, boolean trackIoTiming, Lookahead readStreamLookahead, boolean dataChecksums,
            long segmentBlocks, boolean directIo, boolean registeredBuffers, HugePages hugePages) {
        this(sharedBuffers, maxSessions, ioMaxConcurrency, ioMaxCombineLimit, ioCombineLimit, effectiveIoConcurrency,
                maintenanceIoConcurrency, zeroDamagedPages, ignoreChecksumFailure, trackIoTiming, readStreamLookahead,
                dataChecksums, segmentBlocks, directIo, registeredBuffers, hugePages, ReadStreamPolicy.PAGEIO);
    }

    /** The 1.6 constructor: {@code huge_pages = try}. */
    public BufMgrSettings(int sharedBuffers, int maxSessions, int ioMaxConcurrency, int ioMaxCombineLimit,
            int ioCombineLimit, int effectiveIoConcurrency, int maintenanceIoConcurrency, boolean zeroDamagedPages,
            boolean ignoreChecksumFailure, boolean trackIoTiming, Lookahead readStreamLookahead, boolean dataChecksums,
            long segmentBlocks, boolean directIo, boolean registeredBuffers) {
        this(sharedBuffers, maxSessions, ioMaxConcurrency, ioMaxCombineLimit, ioCombineLimit, effectiveIoConcurrency,
                maintenanceIoConcurrency, zeroDamagedPages, ignoreChecksumFailure, trackIoTiming, readStreamLookahead,
                dataChecksums, segmentBlocks, directIo, registeredBuffers, HugePages.TRY, ReadStreamPolicy.PAGEIO);
    }

    /** The 1.5 constructor: registered buffers on, {@code huge_pages = try}. */
    public BufMgrSettings(int sharedBuffers, int maxSessions, int ioMaxConcurrency, int ioMaxCombineLimit,
            int ioCombineLimit, int effectiveIoConcurrency, int maintenanceIoConcurrency, boolean zeroDamagedPages,
            boolean ignoreChecksumFailure, boolean trackIoTiming, Lookahead readStreamLookahead, boolean dataChecksums,
            long segmentBlocks, boolean directIo) {
        this(sharedBuffers, maxSessions, ioMaxConcurrency, ioMaxCombineLimit, ioCombineLimit, effectiveIoConcurrency,
                maintenanceIoConcurrency, zeroDamagedPages, ignoreChecksumFailure, trackIoTiming, readStreamLookahead,
                dataChecksums, segmentBlocks, directIo, true, HugePages.TRY, ReadStreamPolicy.PAGEIO);
    }

    public static BufMgrSettings defaults() {
        return new Builder().build();
    }

    /** {@code io_combine_limit} as it applies: capped at {@code io_max_combine_limit}. */
    public int effectiveIoCombineLimit() {
        return Math.min(ioCombineLimit, ioMaxCombineLimit);
    }

    /**
     * The warning PostgreSQL does not give: {@code io_combine_limit} above
     * {@code io_max_combine_limit} is capped. {@code null} when it is not.
     */
    public String combineLimitWarning() {
        if (ioCombineLimit <= ioMaxCombineLimit) {
            return null;
        }
        return "io_combine_limit = " + ioCombineLimit * 8 + "kB is above io_max_combine_limit = " + ioMaxCombineLimit * 8
                + "kB; using " + ioMaxCombineLimit * 8 + "kB (raise io_max_combine_limit, which needs a restart)";
    }

    /** The AIO core's sizing that follows from these settings. */
    public AioConfig aioConfig() {
        return AioConfig.of(maxSessions, ioMaxConcurrency, ioMaxCombineLimit, sharedBuffers);
    }

    /** PostgreSQL's {@code MaxProportionalPins}: buffers per session slot, at least 1. */
    public int maxProportionalPins() {
        return Math.max(1, sharedBuffers / maxSessions);
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.sharedBuffers = sharedBuffers;
        b.maxSessions = maxSessions;
        b.ioMaxConcurrency = ioMaxConcurrency;
        b.ioMaxCombineLimit = ioMaxCombineLimit;
        b.ioCombineLimit = ioCombineLimit;
        b.effectiveIoConcurrency = effectiveIoConcurrency;
        b.maintenanceIoConcurrency = maintenanceIoConcurrency;
        b.zeroDamagedPages = zeroDamagedPages;
        b.ignoreChecksumFailure = ignoreChecksumFailure;
        b.trackIoTiming = trackIoTiming;
        b.readStreamLookahead = readStreamLookahead;
        b.dataChecksums = dataChecksums;
        b.segmentBlocks = segmentBlocks;
        b.directIo = directIo;
        b.registeredBuffers = registeredBuffers;
        b.hugePages = hugePages;
        b.readStreamPolicy = readStreamPolicy;
        return b;
    }

    private static void check(String name, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " = " + value + " is out of range: valid values are " + min + ".." + max);
        }
    }

    /** Builds settings from the defaults. Not thread-safe. */
    public static final class Builder {
        public int sharedBuffers = 16384;
        public int maxSessions = AioConfig.DEFAULT_MAX_SESSIONS;
        public int ioMaxConcurrency = AioConfig.AUTO;
        public int ioMaxCombineLimit = AioConfig.DEFAULT_COMBINE_LIMIT;
        public int ioCombineLimit = AioConfig.DEFAULT_COMBINE_LIMIT;
        public int effectiveIoConcurrency = 16;
        public int maintenanceIoConcurrency = 16;
        public boolean zeroDamagedPages;
        public boolean ignoreChecksumFailure;
        public boolean trackIoTiming;
        public Lookahead readStreamLookahead = Lookahead.PG19;
        public boolean dataChecksums = true;
        public long segmentBlocks = StorageManager.DEFAULT_SEGMENT_BLOCKS;
        public boolean directIo;
        public boolean registeredBuffers = true;
        public HugePages hugePages = HugePages.TRY;
        public ReadStreamPolicy readStreamPolicy = ReadStreamPolicy.PAGEIO;

        public Builder sharedBuffers(int blocks) {
            sharedBuffers = blocks;
            return this;
        }

        public Builder ioCombineLimit(int blocks) {
            ioCombineLimit = blocks;
            return this;
        }

        public Builder effectiveIoConcurrency(int n) {
            effectiveIoConcurrency = n;
            return this;
        }

        public Builder segmentBlocks(long blocks) {
            segmentBlocks = blocks;
            return this;
        }

        public Builder zeroDamagedPages(boolean on) {
            zeroDamagedPages = on;
            return this;
        }

        public Builder ignoreChecksumFailure(boolean on) {
            ignoreChecksumFailure = on;
            return this;
        }

        public Builder readStreamLookahead(Lookahead l) {
            readStreamLookahead = l;
            return this;
        }

        public Builder readStreamPolicy(ReadStreamPolicy p) {
            readStreamPolicy = p;
            return this;
        }

        public Builder maxSessions(int n) {
            maxSessions = n;
            return this;
        }

        public Builder trackIoTiming(boolean on) {
            trackIoTiming = on;
            return this;
        }

        public BufMgrSettings build() {
            return new BufMgrSettings(sharedBuffers, maxSessions, ioMaxConcurrency, ioMaxCombineLimit, ioCombineLimit,
                    effectiveIoConcurrency, maintenanceIoConcurrency, zeroDamagedPages, ignoreChecksumFailure,
                    trackIoTiming, readStreamLookahead, dataChecksums, segmentBlocks, directIo, registeredBuffers,
                    hugePages, readStreamPolicy);
        }
    }
}
