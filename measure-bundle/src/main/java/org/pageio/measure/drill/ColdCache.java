package org.pageio.measure.drill;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import org.pageio.posix.PageCache;
import org.pageio.posix.Residency;

/**
 * Puts a case's files where the case wants them before each run: out of the page cache and
 * proven cold with mincore (cold cases), or read into it (OS-warm case); and says whether the
 * run may count. Stateless.
 */
final class ColdCache {

    private ColdCache() {
    }

    /** Evicts (cold) or warms (OS-warm) the files; returns the residency just before the run. */
    static Residency prepare(DrillCase c, List<Path> files, ByteBuffer buffer) throws IOException {
        if (c.cold()) {
            Residency r = evict(files);
            if (r.residentPages() != 0) {
                r = evict(files); // once more: a read-ahead may still have been in flight
            }
            return r;
        }
        Residency r = residency(files);
        if (r.residentPages() < r.totalPages()) {
            for (Path p : files) {
                readAll(p, buffer);
            }
            r = residency(files);
        }
        return r;
    }

    static Residency evict(List<Path> files) throws IOException {
        return sum(files, PageCache::evict);
    }

    static Residency residency(List<Path> files) throws IOException {
        return sum(files, PageCache::residency);
    }

    /** One file's page-cache residency, after whatever the step does to it. */
    private interface PerFile {
        Residency of(Path file) throws IOException;
    }

    private static Residency sum(List<Path> files, PerFile step) throws IOException {
        long resident = 0;
        long total = 0;
        for (Path p : files) {
            Residency r = step.of(p);
            resident += r.residentPages();
            total += r.totalPages();
        }
        return new Residency(resident, total);
    }

    /** Null when the run may count; else why not (a cold run with pages still cached names the files). */
    static String verdict(DrillCase c, Residency r, List<Path> files) throws IOException {
        if (c.cold()) {
            if (r.residentPages() == 0) {
                return null;
            }
            StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "not cold: %,d of %,d pages still in the page cache after"
                    + " eviction (", r.residentPages(), r.totalPages()));
            String sep = "";
            for (Path p : files) {
                Residency f = PageCache.residency(p);
                if (f.residentPages() > 0) {
                    b.append(sep).append(p.getFileName()).append(' ').append(Drill.percent(f.fraction()));
                    sep = ", ";
                }
            }
            return b.append("); something has them mapped or is reading them").toString();
        }
        return r.fraction() >= 0.99 ? null
                : "not warm: only " + Drill.percent(r.fraction()) + " of the files stayed in the page cache (memory pressure?)";
    }

    private static void readAll(Path p, ByteBuffer buffer) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            long pos = 0;
            int n;
            while ((n = ch.read(buffer.clear(), pos)) > 0) {
                pos += n;
            }
        }
    }
}
