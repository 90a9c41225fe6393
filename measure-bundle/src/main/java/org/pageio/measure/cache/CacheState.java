package org.pageio.measure.cache;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.pageio.posix.Residency;

/**
 * The page-cache residency of a set of files, per file and in all, as {@code mincore} measured it.
 * Immutable.
 *
 * @param files each file's residency, in the order the files were given
 */
public record CacheState(List<FileResidency> files) {

    /** One file's residency. */
    public record FileResidency(Path file, Residency residency) {

        public long residentPages() {
            return residency.residentPages();
        }

        public long totalPages() {
            return residency.totalPages();
        }
    }

    public CacheState {
        files = List.copyOf(files);
    }

    public long residentPages() {
        return files.stream().mapToLong(FileResidency::residentPages).sum();
    }

    public long totalPages() {
        return files.stream().mapToLong(FileResidency::totalPages).sum();
    }

    /** All the files as one {@link Residency}. */
    public Residency total() {
        return new Residency(residentPages(), totalPages());
    }

    /** Resident pages / total pages, 0 for no pages. */
    public double fraction() {
        return total().fraction();
    }

    /** Whether not one page of the files is in the page cache. */
    public boolean cold() {
        return residentPages() == 0;
    }

    /** The files with pages still resident. */
    public List<FileResidency> stillResident() {
        return files.stream().filter(f -> f.residentPages() > 0).toList();
    }

    /**
     * Null when cold; else one line: {@code "not cold: 64 of 320 pages still in the page cache after
     * posix_fadvise(DONTNEED) (16384.1: 64 of 64 pages); something has them mapped or is reading them"}.
     */
    public String notCold() {
        if (cold()) {
            return null;
        }
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
                "not cold: %,d of %,d pages still in the page cache after posix_fadvise(DONTNEED) (", residentPages(), totalPages()));
        String sep = "";
        for (FileResidency f : stillResident()) {
            b.append(sep).append(f.file().getFileName()).append(String.format(Locale.ROOT, ": %,d of %,d pages", f.residentPages(),
                    f.totalPages()));
            sep = ", ";
        }
        return b.append("); something has them mapped or is reading them").toString();
    }
}
