package org.pageio.measure.drill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The iolog fio replays for a random scan, and the order of first appearances it is written from. */
class FioBaselineTest {

    @TempDir
    Path tmp;

    @Test
    void theIologReadsEachBlockOfItsSegmentInTheGivenOrder() throws IOException {
        Path s0 = tmp.resolve("16384");
        Path s1 = tmp.resolve("16384.1");
        Path log = tmp.resolve("scan.iolog");
        FioBaseline.writeIolog(log, List.of(s0, s1), 4, new long[] {5, 0, 3, 4});
        List<String> lines = Files.readAllLines(log);
        assertEquals(List.of("fio version 2 iolog", s0 + " add", s1 + " add", s0 + " open", s1 + " open", s1 + " read 8192 8192",
                s0 + " read 0 8192", s0 + " read 24576 8192", s1 + " read 0 8192", s0 + " close", s1 + " close"), lines);
        IOException beyond = assertThrows(IOException.class, () -> FioBaseline.writeIolog(log, List.of(s0, s1), 4, new long[] {8}));
        assertTrue(beyond.getMessage().contains("block 8 lies beyond the 2 segment file(s)"), beyond.getMessage());
    }

    @Test
    void aRepeatedBlockIsReadWhereItFirstAppears() {
        assertEquals(List.of(7L, 2L, 9L, 1L), java.util.Arrays.stream(DrillTables.firstOccurrences(new long[] {7, 2, 7, 9, 2, 1, 9}))
                .boxed().toList());
    }

    @Test
    void theReplayRunsAtTheScansDepthWithDirectIo() {
        List<String> cmd = FioBaseline.replayCommand("fio", 16, Path.of("/tmp/x.iolog"));
        assertTrue(cmd.contains("--iodepth=16") && cmd.contains("--direct=1") && cmd.contains("--read_iolog=/tmp/x.iolog")
                && cmd.contains("--readonly"), cmd.toString());
        assertEquals(16, FioBaseline.Job.SAME_READS.depth(16));
        assertEquals(64, FioBaseline.Job.RAND_CEILING.depth(16));
    }
}
