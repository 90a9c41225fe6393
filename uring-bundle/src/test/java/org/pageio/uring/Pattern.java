package org.pageio.uring;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The unit-test twin of the conformance kit's {@code org.pageio.tck.BlockPattern}: every byte of
 * every 8 KiB block derives from the file name and the block number (the same function), so a byte
 * from the wrong file, block or offset is detected. A copy because the kit's module depends on this
 * one (its tests run the kit over io_uring), so this module's tests cannot use the kit. Pure
 * functions; any thread.
 */
public final class Pattern {

    public static final int BLOCK = 8192;

    private Pattern() {
    }

    public static byte expected(String name, long block, int i) {
        int h = name.hashCode() * 0x9E3779B1 + (int) block * 0x85EBCA6B + (int) (block >>> 32);
        return (byte) ((h >>> (i & 15)) ^ (i * 31) ^ (i >>> 8));
    }

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

    /** Number of bytes of {@code buf} (one block) that differ from block {@code block} of {@code name}. */
    public static int wrongBytes(String name, long block, MemorySegment buf) {
        int wrong = 0;
        for (int i = 0; i < BLOCK; i++) {
            if (buf.get(ValueLayout.JAVA_BYTE, i) != expected(name, block, i)) {
                wrong++;
            }
        }
        return wrong;
    }
}
