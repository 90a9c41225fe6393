package org.pageio.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The per-round ratios the benchmark's figures are read from, and how far their median can be trusted. */
class DirectVsFioBenchTest {
    private static final String W = DirectVsFioBench.workload(true);

    private static DirectVsFioBench.Result pass(String who, double iops) {
        return new DirectVsFioBench.Result(who, W, iops * 8192, iops, 131072, 5.0, "");
    }

    @Test
    void ratiosPairEachPassWithTheBasePassOfItsRound() {
        List<DirectVsFioBench.Result> all = new ArrayList<>();
        double[] fio = {100, 50, 200};
        double[] ours = {90, 50, 100}; // 0.9, 1.0, 0.5 round by round
        for (int i = 0; i < fio.length; i++) {
            all.add(pass("fio", fio[i]));
            all.add(pass("direct io_uring", ours[i]));
        }
        double[] r = DirectVsFioBench.pairedRatios(all, "direct io_uring", "fio", W, true);
        assertEquals(0.9, r[0], 1e-9, "median of the per-round ratios, not a ratio of medians (0.5)");
        assertEquals(0.5, r[1], 1e-9);
        assertEquals(1.0, r[2], 1e-9);
        double[] none = DirectVsFioBench.pairedRatios(all, "direct threads", "fio", W, true);
        assertEquals(5, none.length, "a row without passes still has every field the ratio lines print");
        assertTrue(Double.isNaN(none[0]) && Double.isNaN(none[4]));
    }

    @Test
    void theConfidenceIntervalHoldsTheMedianAndNarrowsWithMoreRounds() {
        Random rnd = new Random(7);
        double[] widths = new double[2];
        int k = 0;
        for (int rounds : new int[] {6, 60}) {
            List<DirectVsFioBench.Result> all = new ArrayList<>();
            for (int i = 0; i < rounds; i++) {
                double f = 80_000 + rnd.nextInt(20_000);
                all.add(pass("fio", f));
                all.add(pass("direct io_uring", f * (0.88 + 0.2 * (rnd.nextDouble() - 0.5))));
            }
            double[] r = DirectVsFioBench.pairedRatios(all, "direct io_uring", "fio", W, true);
            assertTrue(r[3] <= r[0] && r[0] <= r[4], "the interval holds the median: " + r[3] + " " + r[0] + " " + r[4]);
            assertTrue(r[1] <= r[3] && r[4] <= r[2], "and lies within the rounds' range");
            widths[k++] = r[4] - r[3];
        }
        assertTrue(widths[1] < widths[0] * 0.75, "60 rounds pin the median down better than 6: " + widths[0] + " " + widths[1]);
    }
}
