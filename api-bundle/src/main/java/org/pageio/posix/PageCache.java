package org.pageio.posix;

import java.nio.file.Path;

/**
 * A file's pages in the OS page cache, without root: eviction ({@code fdatasync} then
 * {@code posix_fadvise(POSIX_FADV_DONTNEED)} over the whole file) and residency
 * ({@code mincore(2)}, through {@link Posix#residency}). The kernel cannot drop dirty pages, hence
 * the {@code fdatasync} first; it also keeps pages that a process has mapped, so eviction is only
 * proven by the residency it returns. Thread-safe.
 */
public final class PageCache {

    private PageCache() {
    }

    /**
     * Evicts {@code file} from the page cache and returns its residency afterwards; 0 resident
     * pages means cold.
     *
     * @throws PosixException naming the file and the call that failed
     */
    public static Residency evict(Path file) throws PosixException {
        int fd = Posix.open(file, OpenFlags.O_RDONLY, 0);
        try {
            return evict(fd, Posix.fstat(fd, file).size(), file);
        } finally {
            Posix.close(fd, file);
        }
    }

    /** {@link #evict(Path)} on an open descriptor; {@code length} bytes from offset 0 are checked. */
    public static Residency evict(int fd, long length, Path file) throws PosixException {
        Posix.fdatasyncOrThrow(fd, file);
        Posix.fadvise(fd, 0, 0, Fadvise.POSIX_FADV_DONTNEED, file);
        return Posix.residency(fd, 0, length, file);
    }

    /** The residency of all of {@code file}. */
    public static Residency residency(Path file) throws PosixException {
        int fd = Posix.open(file, OpenFlags.O_RDONLY, 0);
        try {
            return Posix.residency(fd, 0, Posix.fstat(fd, file).size(), file);
        } finally {
            Posix.close(fd, file);
        }
    }
}
