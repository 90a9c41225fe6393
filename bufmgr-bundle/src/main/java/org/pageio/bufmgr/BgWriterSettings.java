package org.pageio.bufmgr;

/**
 * The background writer's settings, PostgreSQL's {@code bgwriter_delay}, {@code bgwriter_lru_maxpages}
 * and {@code bgwriter_lru_multiplier}, with its defaults: 200 ms, 100 pages, 2.0. Validated: a value
 * out of range names the setting and its valid range.
 */
public record BgWriterSettings(int delayMillis, int lruMaxPages, double lruMultiplier) {

    public static final BgWriterSettings DEFAULTS = new BgWriterSettings(200, 100, 2.0);

    public BgWriterSettings {
        if (delayMillis < 10 || delayMillis > 10_000) {
            throw new IllegalArgumentException("bgwriter_delay " + delayMillis + " ms is out of range: valid values are 10..10000 ms");
        }
        if (lruMaxPages < 0 || lruMaxPages > 1_073_741_823) {
            throw new IllegalArgumentException("bgwriter_lru_maxpages " + lruMaxPages + " is out of range: valid values are 0..1073741823");
        }
        if (!(lruMultiplier >= 0 && lruMultiplier <= 10)) {
            throw new IllegalArgumentException("bgwriter_lru_multiplier " + lruMultiplier + " is out of range: valid values are 0..10");
        }
    }
}
