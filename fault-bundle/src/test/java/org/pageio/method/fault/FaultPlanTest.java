package org.pageio.method.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.pageio.method.fault.FaultPlan.Kind;
import org.pageio.method.fault.FaultPlan.Op;
import org.pageio.method.fault.FaultPlan.Rule;

/** Rules as ConfigAdmin holds them: parsed, or refused with one line naming the word and what is valid. */
class FaultPlanTest {

    @Test
    void parsesEveryKeyOfARule() {
        Rule r = FaultPlan.parseRule("eio read file=pg_default/16384 blocks=5-6 fraction=0.5 times=2");
        assertEquals(new Rule(Kind.EIO, Op.READ, "pg_default/16384", 5 * 8192, 7 * 8192, 0.5, 2, 0), r);
        assertEquals(new Rule(Kind.ENOSPC, Op.WRITE, null, 0, Long.MAX_VALUE, 1.0, -1, 0), FaultPlan.parseRule("enospc"));
        assertEquals(new Rule(Kind.DELAY, Op.ANY, null, 0, Long.MAX_VALUE, 0.2, -1, 3),
                FaultPlan.parseRule("  DELAY any delay=3ms fraction=0.2 "));
        Rule b = FaultPlan.parseRule("short_read blocks=9");
        assertEquals(9 * 8192, b.fromOffset());
        assertEquals(10 * 8192, b.toOffset());
        assertNull(b.targetContains());
        assertEquals(2, FaultPlan.parse("reorder", " ", "eio fsync").rules().size());
    }

    @Test
    void refusesBadRulesWithOneLineNamingTheWord() {
        String[][] cases = {
            {"eoi read", "unknown fault 'eoi': valid faults are eio, short_read, enospc, short_write, torn_write, delay, reorder"},
            {"eio sideways", "unknown word 'sideways'"},
            {"eio colour=red", "unknown key 'colour': valid keys are file, blocks, fraction, times, delay"},
            {"eio blocks=7-3", "bad value in 'blocks=7-3'"},
            {"eio fraction=1.5", "fault fraction 1.5 is out of range: valid values are 0..1"},
            {"", "empty fault rule"},
        };
        for (String[] c : cases) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FaultPlan.parseRule(c[0]));
            assertTrue(e.getMessage().contains(c[1]), e.getMessage());
            assertTrue(e.getMessage().lines().count() == 1, e.getMessage());
        }
    }
}
