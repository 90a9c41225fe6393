package org.pageio.measure.drill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pageio.measure.fio.Fio;

/** The drill's fio jobs (what each series runs) and the order of first appearances an iolog is written from. */
class FioSeriesTest {

    @Test
    void aRepeatedBlockIsReadWhereItFirstAppears() {
        assertEquals(List.of(7L, 2L, 9L, 1L), java.util.Arrays.stream(DrillTables.firstOccurrences(new long[] {7, 2, 7, 9, 2, 1, 9}))
                .boxed().toList());
    }

    @Test
    void theReplayRunsAtTheScansDepthWithDirectIo() {
        List<String> cmd = new Fio(Path.of("fio")).command(FioSeries.SAME_READS.job(16, List.of(), 0, Path.of("/tmp/x.iolog")));
        assertTrue(cmd.contains("--iodepth=16") && cmd.contains("--direct=1") && cmd.contains("--read_iolog=/tmp/x.iolog")
                && cmd.contains("--readonly"), cmd.toString());
        assertEquals(16, FioSeries.SAME_READS.depth(16));
        assertEquals(64, FioSeries.RAND_CEILING.depth(16));
    }

    /** The drill's jobs, option for option: a refactor of how they are built must not change what fio runs. */
    @Test
    void eachSeriesRunsTheDrillsJob() {
        Fio fio = new Fio(Path.of("fio"));
        List<Path> files = List.of(Path.of("/d/16384"), Path.of("/d/16384.1"));
        assertEquals(List.of("fio", "--name=pageio-drill", "--filename=/d/16384:/d/16384.1", "--readonly", "--rw=read", "--bs=128k",
                "--iodepth=4", "--direct=0", "--ioengine=io_uring", "--output-format=json", "--file_service_type=sequential"),
                fio.command(FioSeries.SEQ_BUFFERED.job(4, files, 1 << 20, null)));
        assertEquals(List.of("fio", "--name=pageio-drill", "--filename=/d/16384:/d/16384.1", "--readonly", "--rw=read", "--bs=128k",
                "--iodepth=1", "--direct=1", "--ioengine=io_uring", "--output-format=json", "--file_service_type=sequential"),
                fio.command(FioSeries.SEQ_DIRECT.job(0, files, 1 << 20, null)));
        assertEquals(List.of("fio", "--name=pageio-drill", "--filename=/d/16384:/d/16384.1", "--readonly", "--rw=randread", "--bs=8k",
                "--iodepth=64", "--direct=1", "--ioengine=io_uring", "--output-format=json", "--io_size=1048576"),
                fio.command(FioSeries.RAND_CEILING.job(16, files, 1 << 20, null)));
        assertEquals(List.of("fio", "--name=pageio-drill", "--read_iolog=/tmp/x.iolog", "--readonly", "--iodepth=16", "--direct=1",
                "--ioengine=io_uring", "--output-format=json"), fio.command(FioSeries.SAME_READS.job(16, files, 1 << 20,
                Path.of("/tmp/x.iolog"))));
    }

    @Test
    void aMissingFioIsSaidPlainly() {
        assertEquals("fio is not installed: apt-get install fio (there is no fio baseline in this run)", FioSeries.note(null, true));
    }
}
