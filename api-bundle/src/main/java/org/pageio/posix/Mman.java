package org.pageio.posix;

/** Protection and flag values for {@link Posix#mmap}, advice for {@link Posix#madvise}; Linux values (x86_64 and aarch64). Thread-safe. */
public final class Mman {
    public static final int PROT_NONE = 0;
    public static final int PROT_READ = 0x1;
    public static final int PROT_WRITE = 0x2;
    public static final int MAP_SHARED = 0x01;
    public static final int MAP_PRIVATE = 0x02;
    /** Not backed by a file: pass fd -1 and offset 0. */
    public static final int MAP_ANONYMOUS = 0x20;
    /** Prefault the mapping's pages (reading the file ahead for file mappings). */
    public static final int MAP_POPULATE = 0x8000;
    /** {@link Posix#madvise}: back the range with transparent huge pages where the kernel can. */
    public static final int MADV_HUGEPAGE = 14;
    /** {@link Posix#madvise}: never back the range with transparent huge pages. */
    public static final int MADV_NOHUGEPAGE = 15;
    /** {@link Posix#madvise}: fault every page in, writable, now (Linux 5.14; EINVAL before). */
    public static final int MADV_POPULATE_WRITE = 23;

    private Mman() { }
}
