package org.pageio.measure.fio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line of each kind of job, and the iolog a replay reads. */
class FioJobTest {

    @TempDir
    Path tmp;

    private static final Fio FIO = new Fio(Path.of("/usr/bin/fio"));

    @Test
    void aSequentialReadGoesThroughTheFilesInTurn() {
        FioJob j = FioJob.sequentialRead(List.of(Path.of("/d/a"), Path.of("/d/b:c")), 128 * 1024, 16, false);
        assertEquals(List.of("/usr/bin/fio", "--name=pageio", "--filename=/d/a:/d/b\\:c", "--readonly", "--rw=read", "--bs=128k",
                "--iodepth=16", "--direct=0", "--ioengine=io_uring", "--output-format=json", "--file_service_type=sequential"),
                FIO.command(j));
        assertEquals("read 128k at depth 16, buffered, io_uring", j.describe());
    }

    @Test
    void aRandomReadCarriesItsLimits() {
        FioJob j = FioJob.randomRead(List.of(Path.of("/d/a")), 8192, 64, true).withName("randread").withSize(1 << 30)
                .withIoSize(4 << 20).withRuntime(10).withInvalidate(true).withEngine(FioJob.Engine.LIBAIO);
        assertEquals(List.of("/usr/bin/fio", "--name=randread", "--filename=/d/a", "--readonly", "--rw=randread", "--bs=8k",
                "--iodepth=64", "--direct=1", "--ioengine=libaio", "--output-format=json", "--size=1073741824", "--io_size=4194304",
                "--runtime=10", "--invalidate=1"), FIO.command(j));
        assertEquals("--ioengine=psync", j.withEngine(FioJob.Engine.PSYNC).arguments().get(7));
        assertEquals("--iodepth=4", j.withDepth(4).arguments().get(5));
    }

    @Test
    void severalJobsReadDisjointRegionsOfOneFileAsAGroup() {
        FioJob j = FioJob.sequentialRead(List.of(Path.of("/d/a")), 128 * 1024, 16, false).withSize(1 << 20).withJobs(4);
        assertEquals(List.of("/usr/bin/fio", "--name=pageio", "--filename=/d/a", "--readonly", "--rw=read", "--bs=128k",
                "--iodepth=16", "--direct=0", "--ioengine=io_uring", "--output-format=json", "--file_service_type=sequential",
                "--size=1048576", "--numjobs=4", "--offset_increment=1048576", "--group_reporting"), FIO.command(j));
        assertEquals(4, j.jobs());
        assertEquals("4 jobs of read 128k at depth 16 each, buffered, io_uring", j.describe());
        FioJob one = FioJob.sequentialRead(List.of(Path.of("/d/a")), 128 * 1024, 16, false);
        assertEquals(1, one.jobs());
        assertThrows(IllegalArgumentException.class, () -> one.withJobs(2), "no size: the regions are not defined");
        assertThrows(IllegalArgumentException.class, () -> FioJob.sequentialRead(List.of(Path.of("/d/a"), Path.of("/d/b")), 8192, 1,
                false).withSize(8192).withJobs(2), "two files");
        assertThrows(IllegalArgumentException.class, () -> FioJob.randomRead(List.of(Path.of("/d/a")), 8192, 1, false).withSize(8192)
                .withJobs(2), "random reads");
        assertThrows(IllegalArgumentException.class, () -> one.withSize(8192).withJobs(0));
    }

    @Test
    void aReplayReadsTheIologAtItsDepth() {
        FioJob j = FioJob.replay(Path.of("/tmp/x.iolog"), 8192, 16, true);
        assertEquals(List.of("/usr/bin/fio", "--name=pageio", "--read_iolog=/tmp/x.iolog", "--readonly", "--iodepth=16", "--direct=1",
                "--ioengine=io_uring", "--output-format=json"), FIO.command(j));
        assertEquals(FioJob.Kind.REPLAY, j.kind());
    }

    @Test
    void aWriteIsFsyncedAtTheEndAndNotReadonly() {
        FioJob j = FioJob.sequentialWrite(Path.of("/d/w"), 1 << 20, 128 * 1024, 16, true).withName("seqwrite");
        assertEquals(List.of("/usr/bin/fio", "--name=seqwrite", "--filename=/d/w", "--rw=write", "--bs=128k", "--iodepth=16",
                "--direct=1", "--ioengine=io_uring", "--output-format=json", "--size=1048576", "--end_fsync=1"), FIO.command(j));
    }

    @Test
    void badJobsAndEnginesAreRefusedInOneLine() {
        assertEquals("fio engine must be io_uring, libaio or psync, not posixaio",
                assertThrows(IllegalArgumentException.class, () -> FioJob.Engine.parse("posixaio")).getMessage());
        assertEquals(FioJob.Engine.LIBAIO, FioJob.Engine.parse("libaio"));
        assertEquals("fio job: block size and depth must be positive, not 8192 and 0",
                assertThrows(IllegalArgumentException.class, () -> FioJob.randomRead(List.of(Path.of("/a")), 8192, 0, true))
                        .getMessage());
        assertEquals("fio job: no file to randread",
                assertThrows(IllegalArgumentException.class, () -> FioJob.randomRead(List.of(), 8192, 1, true)).getMessage());
    }

    @Test
    void theIologReadsEachBlockOfItsSegmentInTheGivenOrder() throws IOException {
        Path s0 = tmp.resolve("16384");
        Path s1 = tmp.resolve("16384.1");
        Path log = tmp.resolve("scan.iolog");
        FioJob.writeIolog(log, List.of(s0, s1), 4, 8192, new long[] {5, 0, 3, 4});
        List<String> lines = Files.readAllLines(log);
        assertEquals(List.of("fio version 2 iolog", s0 + " add", s1 + " add", s0 + " open", s1 + " open", s1 + " read 8192 8192",
                s0 + " read 0 8192", s0 + " read 24576 8192", s1 + " read 0 8192", s0 + " close", s1 + " close"), lines);
        IOException beyond = assertThrows(IOException.class, () -> FioJob.writeIolog(log, List.of(s0, s1), 4, 8192, new long[] {8}));
        assertTrue(beyond.getMessage().contains("block 8 lies beyond the 2 segment file(s)"), beyond.getMessage());
    }
}
