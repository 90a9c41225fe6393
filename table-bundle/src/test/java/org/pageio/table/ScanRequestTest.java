package org.pageio.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The command form of a scan, as {@code pageio:scan} and {@code pageio:explain} pass it. */
class ScanRequestTest {

    @Test
    void theCommandFormParsesEachKind() {
        ScanRequest b = ScanRequest.parse("bitmap", "prefetch_test", "val", "-5", "20");
        assertEquals(ScanKind.BITMAP, b.kind());
        assertEquals(-5, b.lo());
        assertEquals(20, b.hi());
        assertEquals(7, ScanRequest.parse("limit", "prefetch_test", "val", "1", "7").limit());
        assertEquals(ScanKind.COUNT, ScanRequest.parse("count", "t").kind());
    }

    @Test
    void tooFewWordsGetEveryFormAndABadLimitItsOwn() {
        assertEquals("usage: count T | filter T COLUMN PATTERN | bitmap T COLUMN LO HI | index T COLUMN LO HI"
                + " | limit T COLUMN LO N | ios T ['COL1 = X'] COLUMN LO HI | checksums T",
                assertThrows(IllegalArgumentException.class, () -> ScanRequest.parse("count")).getMessage());
        assertEquals("scan limit: N takes a whole number of rows, 1 or more (got 0); usage: limit T COLUMN LO N",
                assertThrows(IllegalArgumentException.class,
                        () -> ScanRequest.parse("limit", "t", "val", "1", "0")).getMessage());
    }

    @Test
    void eachKindTakesTheArgumentsOfItsForm() {
        assertEquals("scan count takes 1 argument(s) after its name, got 2",
                assertThrows(IllegalArgumentException.class, () -> ScanRequest.parse("count", "t", "x")).getMessage());
        assertEquals("scan checksums takes 1 argument(s) after its name, got 3",
                assertThrows(IllegalArgumentException.class, () -> ScanRequest.parse("checksums", "t", "x", "y")).getMessage());
        assertEquals("scan filter takes 3 argument(s) after its name, got 2",
                assertThrows(IllegalArgumentException.class, () -> ScanRequest.parse("filter", "t", "payload")).getMessage());
        assertEquals("scan bitmap takes 4 argument(s) after its name, got 3",
                assertThrows(IllegalArgumentException.class, () -> ScanRequest.parse("bitmap", "t", "val", "1")).getMessage());
        assertEquals("scan index takes 4 argument(s) after its name, got 5",
                assertThrows(IllegalArgumentException.class,
                        () -> ScanRequest.parse("index", "t", "val", "1", "2", "3")).getMessage());
        assertEquals("scan limit takes 4 argument(s) after its name, got 2",
                assertThrows(IllegalArgumentException.class, () -> ScanRequest.parse("limit", "t", "val")).getMessage());
        assertEquals(ScanKind.FILTER, ScanRequest.parse("filter", "t", "payload", "%a%").kind());
        assertEquals(ScanKind.CHECKSUMS, ScanRequest.parse("checksums", "t").kind());
    }

    @Test
    void aBoundThatIsNotAWholeNumberIsNamedWithTheUsage() {
        assertEquals("scan bitmap: HI takes a whole number (got \"x\"); usage: bitmap T COLUMN LO HI",
                assertThrows(IllegalArgumentException.class,
                        () -> ScanRequest.parse("bitmap", "t", "val", "1", "x")).getMessage());
        assertEquals("scan index: LO takes a whole number (got \"1.5\"); usage: index T COLUMN LO HI",
                assertThrows(IllegalArgumentException.class,
                        () -> ScanRequest.parse("index", "t", "val", "1.5", "2")).getMessage());
        assertEquals("scan limit: N takes a whole number (got \"ten\"); usage: limit T COLUMN LO N",
                assertThrows(IllegalArgumentException.class,
                        () -> ScanRequest.parse("limit", "t", "val", "1", "ten")).getMessage());
    }

    @Test
    void indexOnlyScansTakeARangeOrAnEqualityOnTheFirstOfTwoColumns() {
        ScanRequest one = ScanRequest.parse("ios", "p", "val", "100", "5000");
        assertEquals(ScanKind.IOS, one.kind());
        assertEquals("val", one.column());
        assertEquals(null, one.eqColumn());
        ScanRequest two = ScanRequest.parse("ios", "p", "cat = 50", "val", "100", "5000");
        assertEquals("cat", two.eqColumn());
        assertEquals(50, two.eqValue());
        assertEquals("val", two.column());
        assertEquals(100, two.lo());
        assertEquals(5000, two.hi());
        assertEquals(two, ScanRequest.parse("ios", "p", "cat=50", "val", "100", "5000"));
        assertEquals(two.eqColumn(), two.with(ScanSettings.INHERIT).eqColumn());
        IllegalArgumentException form = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ScanRequest.parse("ios", "p", "cat < 50", "val", "100", "5000"));
        assertEquals("scan ios: the first column's condition takes the form 'COL1 = X' (quoted), X a whole number (got \"cat < 50\");"
                + " usage: ios T ['COL1 = X'] COLUMN LO HI", form.getMessage());
        IllegalArgumentException count = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ScanRequest.parse("ios", "p", "val", "100"));
        org.junit.jupiter.api.Assertions.assertTrue(count.getMessage().startsWith("scan ios takes 3 arguments"), count.getMessage());
        IllegalArgumentException lo = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ScanRequest.parse("ios", "p", "cat = 50", "val", "x", "5000"));
        org.junit.jupiter.api.Assertions.assertTrue(lo.getMessage().startsWith("scan ios: LO takes a whole number"), lo.getMessage());
    }
}
