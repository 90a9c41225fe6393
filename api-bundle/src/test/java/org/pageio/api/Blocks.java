package org.pageio.api;

import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Known file content: every byte of every 8 KiB block derives from the file name and block number. */
final class Blocks {

    static final int BLOCK = 8192;

    private Blocks() {
    }

    static byte expected(String name, int block, int i) {
        int h = name.hashCode() * 0x9E3779B1 + block * 0x85EBCA6B;
        return (byte) ((h >>> (i & 15)) ^ (i * 31) ^ (i >>> 8));
    }

    static byte[] content(String name, int blocks) {
        byte[] b = new byte[blocks * BLOCK];
        for (int blk = 0; blk < blocks; blk++) {
            for (int i = 0; i < BLOCK; i++) {
                b[blk * BLOCK + i] = expected(name, blk, i);
            }
        }
        return b;
    }

    static void assertBlock(String name, int block, MemorySegment buf) {
        for (int i = 0; i < BLOCK; i++) {
            byte got = buf.get(ValueLayout.JAVA_BYTE, i);
            if (got != expected(name, block, i)) {
                fail("wrong byte " + i + " of block " + block + " of " + name + ": " + got + " != " + expected(name, block, i));
            }
        }
    }
}
