package org.pageio.measure.drill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The rule that keeps a clock's granularity out of the drill's CPU columns and sentences. */
class CpuFiguresTest {

    static final long MS = 1_000_000L;

    @Test
    void aFigureShowsOnlyAtTenTimesItsClocksResolution() {
        assertFalse(CpuFigures.measurable(10 * MS, RunProbe.NANOS_PER_TICK), "one 10 ms tick is the timer, not a measurement");
        assertFalse(CpuFigures.measurable(90 * MS, RunProbe.NANOS_PER_TICK));
        assertTrue(CpuFigures.measurable(100 * MS, RunProbe.NANOS_PER_TICK));
        assertTrue(CpuFigures.measurable(3 * MS, 1), "a nanosecond clock measures a few milliseconds");
        assertFalse(CpuFigures.measurable(-1, 1), "unknown");
        assertFalse(CpuFigures.measurable(5 * MS, CpuFigures.FIO_RESOLUTION_NANOS));
    }

    @Test
    void theShareOfWallTimeIsAPercentageOnlyUpToAHundred() {
        assertEquals("50% of its wall time", CpuFigures.share(50 * MS, 100 * MS, 1));
        assertEquals("100% of its wall time", CpuFigures.share(100 * MS, 100 * MS, 1));
        // the small drill's "161% of its wall time": a 10 ms tick over a 6.2 ms run
        assertNull(CpuFigures.share(10 * MS, 6_200_000L, RunProbe.NANOS_PER_TICK));
        String over = CpuFigures.share(161 * MS, 100 * MS, 1);
        assertEquals("more CPU than wall time: other threads of the process ran meanwhile", over);
        assertFalse(over.contains("%"), over);
    }

    @Test
    void whatIsLeftOutIsSaid() {
        assertEquals("CPU: below 10× the timer's 10 ms resolution, not shown (–)", CpuFigures.belowResolution(RunProbe.NANOS_PER_TICK));
        assertEquals("CPU: below 10× the timer's 1 ns resolution, not shown (–)", CpuFigures.belowResolution(1));
    }

    /** On Linux the process CPU clock has nanoseconds: a run's CPU time is not a multiple of the 10 ms tick. */
    @Test
    void theProbeReadsTheNanosecondClock() {
        assertEquals(1, RunProbe.cpuResolutionNanos(), "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) must answer here");
        long a = RunProbe.processCpuNanos();
        long ticks = RunProbe.tickCpuNanos();
        assertTrue(a > 0 && ticks >= 0 && Math.abs(a - ticks) < 2 * RunProbe.NANOS_PER_TICK + 50 * MS,
                "clock " + a + " ns, /proc/self/stat " + ticks + " ns");
    }
}
