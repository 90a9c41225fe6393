package org.pageio.measure.drill;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.pageio.measure.cache.CacheState;
import org.pageio.measure.cache.ColdCache;

/**
 * Puts a case's files where the case wants them before each run, through {@link ColdCache}: out
 * of the page cache and proven cold with mincore (cold cases), or read into it (OS-warm case); and
 * says whether the run may count. Stateless.
 */
final class CaseCache {

    private CaseCache() {
    }

    /** Evicts (cold) or warms (OS-warm) the files; returns the residency just before the run. */
    static CacheState prepare(DrillCase c, List<Path> files, ByteBuffer buffer) throws IOException {
        return prepare(c.cold(), files, buffer);
    }

    /** Evicts ({@code cold}) or warms the files; returns the residency just before the run. */
    static CacheState prepare(boolean cold, List<Path> files, ByteBuffer buffer) throws IOException {
        return cold ? ColdCache.evict(files) : ColdCache.warm(files, buffer);
    }

    /** Null when the run may count; else why not (a cold run with pages still cached names the files). */
    static String verdict(DrillCase c, CacheState s) {
        return verdict(c.cold(), s);
    }

    /** As {@link #verdict(DrillCase, CacheState)} for a run that wants the files cold or warm. */
    static String verdict(boolean cold, CacheState s) {
        if (cold) {
            if (s.cold()) {
                return null;
            }
            StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "not cold: %,d of %,d pages still in the page cache after"
                    + " eviction (", s.residentPages(), s.totalPages()));
            String sep = "";
            for (CacheState.FileResidency f : s.stillResident()) {
                b.append(sep).append(f.file().getFileName()).append(' ').append(Drill.percent(f.residency().fraction()));
                sep = ", ";
            }
            return b.append("); something has them mapped or is reading them").toString();
        }
        return s.fraction() >= 0.99 ? null
                : "not warm: only " + Drill.percent(s.fraction()) + " of the files stayed in the page cache (memory pressure?)";
    }
}
