package org.pageio.measure.cache;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.pageio.posix.PageCache;
import org.pageio.posix.Residency;

/**
 * Puts files out of the OS page cache, or into it, and proves it with {@code mincore}, without
 * root. {@link #evict}: {@code fdatasync} and {@code posix_fadvise(POSIX_FADV_DONTNEED)} over each
 * whole file ({@link PageCache#evict}), once more if a page stayed (a read-ahead may still have
 * been in flight), and the residency measured after; {@link #requireCold} fails with
 * {@link CacheState#notCold()} when a page stayed (the kernel keeps pages a process has mapped, or
 * that a reader brings back). {@link #warm} reads files in until they are resident. Stateless and
 * thread-safe.
 */
public final class ColdCache {

    private ColdCache() {
    }

    /** One file's residency, after whatever the step does to it. */
    private interface PerFile {
        Residency of(Path file) throws IOException;
    }

    private static CacheState each(List<Path> files, PerFile step) throws IOException {
        List<CacheState.FileResidency> r = new ArrayList<>(files.size());
        for (Path p : files) {
            r.add(new CacheState.FileResidency(p, step.of(p)));
        }
        return new CacheState(r);
    }

    /** Evicts {@code files} from the page cache (twice if a page stayed); their residency afterwards. */
    public static CacheState evict(List<Path> files) throws IOException {
        CacheState s = each(files, PageCache::evict);
        if (!s.cold()) {
            s = each(files, PageCache::evict); // once more: a read-ahead may still have been in flight
        }
        return s;
    }

    /**
     * Evicts {@code files} and proves them cold; fails with one line naming each file that kept
     * pages and how many.
     */
    public static CacheState requireCold(List<Path> files) throws IOException {
        CacheState s = evict(files);
        if (!s.cold()) {
            throw new IOException(s.notCold());
        }
        return s;
    }

    /** The residency of {@code files} now. */
    public static CacheState residency(List<Path> files) throws IOException {
        return each(files, PageCache::residency);
    }

    /**
     * Reads {@code files} into the page cache through {@code buffer} when not all their pages are
     * resident; their residency afterwards (memory pressure may leave some out).
     */
    public static CacheState warm(List<Path> files, ByteBuffer buffer) throws IOException {
        CacheState s = residency(files);
        if (s.residentPages() < s.totalPages()) {
            for (Path p : files) {
                readAll(p, buffer);
            }
            s = residency(files);
        }
        return s;
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
