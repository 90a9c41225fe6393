package org.pageio.posix;

import java.util.Locale;

/**
 * The CPU architectures this package knows the Linux ABI of. Package-private: only the values
 * that differ between them (some open flags, {@code struct stat}) consult it.
 */
enum Arch {
    X86_64,
    AARCH64;

    /** The architecture of this JVM; class initialisation fails on any other OS or CPU. */
    static final Arch CURRENT = detect(System.getProperty("os.name"), System.getProperty("os.arch"));

    private static Arch detect(String os, String arch) {
        if (os.toLowerCase(Locale.ROOT).startsWith("linux")) {
            switch (arch) {
                case "amd64", "x86_64" -> { return X86_64; }
                case "aarch64", "arm64" -> { return AARCH64; }
                default -> { }
            }
        }
        throw new UnsupportedOperationException(
                "org.pageio.posix supports Linux on x86_64 and aarch64, not " + os + " on " + arch);
    }
}
