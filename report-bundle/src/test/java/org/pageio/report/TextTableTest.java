package org.pageio.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class TextTableTest {

    @Test
    void alignsColumnsAndTrimsTrailingBlanks() {
        TextTable t = new TextTable("method", "available", "cause", "n").alignRight(3);
        t.row("sync", true, null, 7);
        t.row("io_uring", false, "kernel.io_uring_disabled=2", 12345);
        assertEquals("""
                method   | available | cause                      |     n
                ---------+-----------+----------------------------+------
                sync     | yes       |                            |     7
                io_uring | no        | kernel.io_uring_disabled=2 | 12345
                """, t.toString());
    }

    @Test
    void emptyTableHasHeaderAndRule() {
        assertEquals("a | bb\n--+---\n", new TextTable("a", "bb").toString());
        assertEquals("[]\n", new TextTable("a").toJson());
    }

    @Test
    void jsonKeepsTypesAndEscapes() {
        TextTable t = new TextTable("Method", "available", "cause", "Read bytes");
        t.row("sync", true, null, 8192L);
        t.row("x\"y", false, "line1\nline2\\", 1.5);
        assertEquals("""
                [
                  {"method": "sync", "available": true, "cause": null, "read_bytes": 8192},
                  {"method": "x\\"y", "available": false, "cause": "line1\\nline2\\\\", "read_bytes": 1.5}
                ]
                """, t.toJson());
    }

    @Test
    void newlinesInCellsStayOnOneLine() {
        TextTable t = new TextTable("a");
        t.row("x\ny");
        assertEquals("a\n---\nx y\n", t.toString());
    }

    @Test
    void rowWidthMustMatch() {
        assertThrows(IllegalArgumentException.class, () -> new TextTable("a", "b").row("x"));
    }

    @Test
    void longCellsOfOneColumnBecomeNotesUnderTheTable() {
        String long1 = "seccomp blocks io_uring_setup " + "a".repeat(100);
        TextTable t = new TextTable("method", "cause", "bundle");
        t.row("io_uring", long1, "u").row("direct", long1, "d").row("sync", "short", "s").row("other", "b".repeat(40), "o");
        String text = t.toString(1, 20); // a shortened cell, its mark included, is at most 20 characters
        assertEquals(String.join("\n",
                "method   | cause                | bundle",
                "---------+----------------------+-------",
                "io_uring | seccomp blocks… (1)  | u",
                "direct   | seccomp blocks… (1)  | d",
                "sync     | short                | s",
                "other    | bbbbbbbbbbbbbbb… (2) | o",
                "(1) " + long1,
                "(2) " + "b".repeat(40)) + "\n", text);
    }
}
