package org.pageio.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.pageio.api.AioHandleInfo;
import org.pageio.bufmgr.stats.StatIo;

class StatsCommandsTest {

    @Test
    void statIoLikePgStatIoWithBytesPerRead() {
        StatIo s = new StatIo();
        int base = StatIo.base(s.method("sync"), s.kind("client backend"), StatIo.IoObject.RELATION,
                StatIo.IoContext.BULKREAD);
        s.add(base, StatIo.Column.READS, 4);
        s.add(base, StatIo.Column.READ_BYTES, 4 * 131072);
        s.add(base, StatIo.Column.READ_TIME, 1_234_567);
        s.add(base, StatIo.Column.HITS, 10);
        TextTable t = StatsCommands.statIoTable(s.rows());
        String text = t.toString();
        String[] lines = text.split("\n");
        assertEquals(3, lines.length, text);
        assertTrue(lines[0].startsWith("backend_type   | object   | context  | reads | read_bytes | read_time | writes"), text);
        assertTrue(lines[0].endsWith("| bytes_per_read"), text);
        assertTrue(lines[2].startsWith("client backend | relation | bulkread |     4 |     524288 |     1.235 |      0"), text);
        assertTrue(lines[2].endsWith("|         131072"), text);
        String json = t.toJson();
        assertTrue(json.contains("\"reads\": 4, \"read_bytes\": 524288, \"read_time\": 1.235"), json);
        assertTrue(json.contains("\"bytes_per_read\": 131072}"), json);
        s.reset();
        assertEquals(0, StatsCommands.statIoTable(s.rows()).rowCount());
    }

    @Test
    void aiosLikePgAios() {
        AioHandleInfo h = new AioHandleInfo(2, 17, 5, "SUBMITTED", "readv", 454_295_552L, 131072,
                "blocks 55455..55470 of 1663/5/16384", 0, "UNKNOWN", false, false, false);
        AioHandleInfo done = new AioHandleInfo(1, 3, 9, "COMPLETED_SHARED", "readv", 0, 8192, "block 0", 8192, "OK",
                true, false, false);
        TextTable t = StatsCommands.aiosTable(List.of(h, done));
        String[] lines = t.toString().split("\n");
        assertTrue(lines[0].startsWith("session | io_id | io_generation | state"), lines[0]);
        assertTrue(lines[2].contains("COMPLETED_SHARED") && lines[2].contains("| OK "), lines[2]);
        assertTrue(lines[3].contains("| SUBMITTED        | readv     | 454295552 | 131072 | blocks 55455..55470"), lines[3]);
        assertTrue(t.toJson().contains("\"raw_result\": 0, \"result\": null, \"f_sync\": false"), t.toJson());
    }

    @Test
    void formatIsTextOrJson() {
        assertEquals(false, SettingsCommands.json("TEXT"));
        assertEquals(true, SettingsCommands.json("json"));
        assertEquals("unknown format 'xml': use text or json",
                org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                        () -> SettingsCommands.json("xml")).getMessage());
    }
}
