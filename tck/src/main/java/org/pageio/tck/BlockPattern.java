package org.pageio.tck;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Known content for conformance tests: every byte of every 8 KiB block is derived from the
 * file's name and the block number, so a byte from the wrong file, the wrong block or the wrong
 * offset is detected. Pure functions; any thread.
 */
public final class BlockPattern {

    public static final int BLOCK = 8192;

    private BlockPattern() {
    }

    public static byte expected(String name, long block, int i) {
        int h = name.hashCode() * 0x9E3779B1 + (int) block * 0x85EBCA6B + (int) (block >>> 32);
        return (byte) ((h >>> (i & 15)) ^ (i * 31) ^ (i >>> 8));
    }

    /** Fills {@code buf} (one block) with block {@code block} of {@code name}. */
    public static void fill(String name, long block, MemorySegment buf) {
        for (int i = 0; i < BLOCK; i++) {
            buf.set(ValueLayout.JAVA_BYTE, i, expected(name, block, i));
        }
    }

    /** Writes a file of {@code blocks} blocks named after its file name. */
    public static Path write(Path file, int blocks) throws IOException {
        String name = file.getFileName().toString();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer b = ByteBuffer.allocate(BLOCK);
            for (int blk = 0; blk < blocks; blk++) {
                b.clear();
                for (int i = 0; i < BLOCK; i++) {
                    b.put(expected(name, blk, i));
                }
                b.flip();
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            }
        }
        return file;
    }

    /** The byte at {@code fileOffset} of the file {@link #write} made for {@code name}. */
    public static byte at(String name, long fileOffset) {
        return expected(name, fileOffset / BLOCK, (int) (fileOffset % BLOCK));
    }

    /** Fills {@code buf} (any length) with the bytes of {@code name} from {@code fileOffset} on. */
    public static void fillAt(String name, long fileOffset, MemorySegment buf) {
        for (long i = 0; i < buf.byteSize(); i++) {
            buf.set(ValueLayout.JAVA_BYTE, i, at(name, fileOffset + i));
        }
    }

    /**
     * Returns {@code null} if {@code buf} (any length) holds the bytes of {@code name} from
     * {@code fileOffset} on, else a message naming the first wrong byte by its file offset.
     */
    public static String checkAt(String name, long fileOffset, MemorySegment buf) {
        for (long i = 0; i < buf.byteSize(); i++) {
            byte got = buf.get(ValueLayout.JAVA_BYTE, i);
            byte want = at(name, fileOffset + i);
            if (got != want) {
                return "wrong byte at file offset " + (fileOffset + i) + " of " + name + " (byte " + i + " of a "
                        + buf.byteSize() + "-byte buffer): got " + got + ", expected " + want;
            }
        }
        return null;
    }

    /**
     * Returns {@code null} if {@code buf} holds block {@code block} of {@code name}, else a message
     * naming the first wrong byte.
     */
    public static String check(String name, long block, MemorySegment buf) {
        for (int i = 0; i < BLOCK; i++) {
            byte got = buf.get(ValueLayout.JAVA_BYTE, i);
            byte want = expected(name, block, i);
            if (got != want) {
                return "wrong byte at " + i + " of block " + block + " of " + name + ": got " + got + ", expected " + want;
            }
        }
        return null;
    }
}
