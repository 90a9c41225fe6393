package org.pageio.measure.drill;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousFileChannel;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.measure.cache.CacheState;
import org.pageio.posix.Residency;
import org.pageio.measure.drill.DrillCases.Target;

/**
 * The Java baselines: the same blocks in the same order as the scan, read with
 * {@link FileChannel} (one positional read at a time) or {@link AsynchronousFileChannel}
 * ({@code effective_io_concurrency} reads in flight). Runs in the drill's thread.
 */
final class JavaBaselines {

    /** The buffers of the Java baselines, allocated once per drill. */
    static final class Buffers {
        final ByteBuffer big;
        final ByteBuffer[] inFlight;

        Buffers(int size, int depth) {
            big = ByteBuffer.allocateDirect(size);
            inFlight = new ByteBuffer[Math.max(1, depth)];
            for (int i = 0; i < inFlight.length; i++) {
                inFlight[i] = ByteBuffer.allocateDirect(size);
            }
        }
    }

    private final long segmentBlocks;
    private final RunProbe probe;

    JavaBaselines(long segmentBlocks, RunProbe probe) {
        this.segmentBlocks = segmentBlocks;
        this.probe = probe;
    }

    private static long segment(long block, long segmentBlocks) {
        return block / segmentBlocks;
    }

    /**
     * What a Java developer would write for concurrency: {@link AsynchronousFileChannel} with
     * {@code effective_io_concurrency} positional reads in flight, oldest first; for a sequential
     * case reads of {@code io_combine_limit} bytes through each file, otherwise one 8 kB read per
     * heap fetch in the scan's order.
     */
    Sample runAsyncFileChannel(DrillCase c, int round, Target t, Buffers buf) throws IOException {
        CacheState cache = CaseCache.prepare(c, t.coldFiles(), buf.big);
        Residency res = cache.total();
        String note = CaseCache.verdict(c, cache);
        int depth = Math.max(1, c.eic());
        long reads = 0;
        long bytes = 0;
        RunProbe.Snapshot before = probe.now();
        long t0 = System.nanoTime();
        ArrayDeque<Future<Integer>> pending = new ArrayDeque<>(depth);
        try {
            if (t.blocks() == null) {
                for (Path p : t.heapFiles()) {
                    try (AsynchronousFileChannel ch = AsynchronousFileChannel.open(p, StandardOpenOption.READ)) {
                        long size = ch.size();
                        long next = 0;
                        int slot = 0;
                        while (next < size || !pending.isEmpty()) {
                            while (pending.size() < depth && next < size) {
                                ByteBuffer b = buf.inFlight[slot];
                                slot = (slot + 1) % depth;
                                b.clear();
                                pending.add(ch.read(b, next));
                                next += b.capacity();
                            }
                            int n = pending.poll().get();
                            if (n > 0) {
                                bytes += n;
                                reads++;
                            }
                        }
                    }
                }
            } else {
                AsynchronousFileChannel[] chs = new AsynchronousFileChannel[t.heapFiles().size()];
                try {
                    for (int i = 0; i < chs.length; i++) {
                        chs[i] = AsynchronousFileChannel.open(t.heapFiles().get(i), StandardOpenOption.READ);
                    }
                    long[] blocks = t.blocks();
                    int next = 0;
                    int slot = 0;
                    while (next < blocks.length || !pending.isEmpty()) {
                        while (pending.size() < depth && next < blocks.length) {
                            ByteBuffer b = buf.inFlight[slot];
                            slot = (slot + 1) % depth;
                            b.clear().limit(StorageManager.BLCKSZ);
                            long blk = blocks[next++];
                            pending.add(chs[(int) segment(blk, segmentBlocks)].read(b,
                                    (blk % segmentBlocks) * StorageManager.BLCKSZ));
                        }
                        int n = pending.poll().get();
                        if (n > 0) {
                            bytes += n;
                            reads++;
                        }
                    }
                } finally {
                    for (AsynchronousFileChannel ch : chs) {
                        if (ch != null) {
                            ch.close();
                        }
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("drill interrupted");
        } catch (ExecutionException e) {
            throw new IOException("AsynchronousFileChannel read failed: " + e.getCause(), e.getCause());
        }
        long nanos = System.nanoTime() - t0;
        RunProbe.Snapshot after = probe.now();
        return new Sample(round, nanos, -1, reads, bytes, 0, res.residentPages(), res.totalPages(), note == null, note)
                .probed(before, after);
    }

    /** One positional read at a time: {@code io_combine_limit} bytes through each file, or one 8 kB read per heap fetch. */
    Sample runFileChannel(DrillCase c, int round, Target t, ByteBuffer buffer) throws IOException {
        CacheState cache = CaseCache.prepare(c, t.coldFiles(), buffer);
        Residency res = cache.total();
        String note = CaseCache.verdict(c, cache);
        long reads = 0;
        long bytes = 0;
        RunProbe.Snapshot before = probe.now();
        long t0 = System.nanoTime();
        if (t.blocks() == null) {
            for (Path p : t.heapFiles()) {
                try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
                    long pos = 0;
                    while (true) {
                        buffer.clear();
                        int n = ch.read(buffer, pos);
                        if (n <= 0) {
                            break;
                        }
                        pos += n;
                        bytes += n;
                        reads++;
                    }
                }
            }
        } else {
            FileChannel[] chs = new FileChannel[t.heapFiles().size()];
            try {
                for (int i = 0; i < chs.length; i++) {
                    chs[i] = FileChannel.open(t.heapFiles().get(i), StandardOpenOption.READ);
                }
                for (long blk : t.blocks()) {
                    buffer.clear().limit(StorageManager.BLCKSZ);
                    long offset = (blk % segmentBlocks) * StorageManager.BLCKSZ;
                    int n = chs[(int) segment(blk, segmentBlocks)].read(buffer, offset);
                    if (n > 0) {
                        bytes += n;
                        reads++;
                    }
                }
            } finally {
                for (FileChannel ch : chs) {
                    if (ch != null) {
                        ch.close();
                    }
                }
            }
        }
        long nanos = System.nanoTime() - t0;
        RunProbe.Snapshot after = probe.now();
        return new Sample(round, nanos, -1, reads, bytes, 0, res.residentPages(), res.totalPages(), note == null, note)
                .probed(before, after);
    }
}
