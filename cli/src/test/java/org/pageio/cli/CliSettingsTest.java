package org.pageio.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.bufmgr.BufMgrSettings;

/** The settings file as the command-line tool reads it: the lines it applies, the ones it leaves, and its refusals. */
class CliSettingsTest {

    @TempDir
    Path data;

    private void file(String text) throws Exception {
        Files.createDirectories(data.resolve("conf"));
        Files.writeString(data.resolve(CliSettings.FILE), text);
    }

    @Test
    void noFileIsTheDefaults() throws Exception {
        CliSettings s = CliSettings.of(data);
        assertEquals("worker", s.method());
        assertEquals(BufMgrSettings.defaults(), s.bufmgr());
    }

    @Test
    void theMethodAndTheReadStreamSettingsAreApplied() throws Exception {
        file("# written by pageio:set\n"
                + "io_method = io_uring\n"
                + "effective_io_concurrency = 64\n"
                + "io_combine_limit='32'\n"
                + "read_stream_lookahead = pg18\n"
                + "read_stream_policy = \"postgresql\"\n"
                + "shared_buffers = 262144\n"      // the container's: left alone
                + "io_max_workers = 4\n");
        CliSettings s = CliSettings.of(data);
        assertEquals("io_uring", s.method());
        assertEquals(64, s.bufmgr().effectiveIoConcurrency());
        assertEquals(32, s.bufmgr().ioCombineLimit());
        assertEquals(BufMgrSettings.Lookahead.PG18, s.bufmgr().readStreamLookahead());
        assertEquals(BufMgrSettings.ReadStreamPolicy.POSTGRESQL, s.bufmgr().readStreamPolicy());
        assertEquals(BufMgrSettings.defaults().sharedBuffers(), s.bufmgr().sharedBuffers());
    }

    @Test
    void aValueOutOfRangeNamesTheSettingTheRangeAndTheLine() throws Exception {
        file("io_method = sync\n\neffective_io_concurrency = 5000\n");
        CliSettings.InvalidSetting e = assertThrows(CliSettings.InvalidSetting.class, () -> CliSettings.of(data));
        assertEquals("5000 is outside the valid range for parameter \"effective_io_concurrency\" (0 .. 1000) ("
                + data.resolve(CliSettings.FILE) + ", line 3)", e.getMessage());
    }

    @Test
    void anUnknownMethodListsTheMethodsTheToolHas() throws Exception {
        file("io_method = ratelimit\n");
        CliSettings.InvalidSetting e = assertThrows(CliSettings.InvalidSetting.class, () -> CliSettings.of(data));
        assertTrue(e.getMessage().startsWith("invalid value for parameter \"io_method\": \"ratelimit\""), e.getMessage());
        assertTrue(e.getMessage().endsWith("available values: sync, worker, io_uring, direct, posix_aio"), e.getMessage());
    }

    @Test
    void aWordWhereANumberGoesAndABadLookaheadAreRefused() throws Exception {
        file("io_combine_limit = lots\n");
        assertTrue(assertThrows(CliSettings.InvalidSetting.class, () -> CliSettings.of(data)).getMessage()
                .contains("\"io_combine_limit\": \"lots\""));
        file("read_stream_lookahead = pg17\n");
        assertTrue(assertThrows(CliSettings.InvalidSetting.class, () -> CliSettings.of(data)).getMessage()
                .endsWith("available values: pg18, pg19"));
    }
}
