package org.pageio.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The tool's JIT policy ({@code cli/jit-directives.json}, passed by {@code ./pageio}): this JDK
 * accepts the file, and it says what the README says — C2 for {@code PgChecksum}, C1 alone for
 * everything else.
 */
class JitDirectivesTest {

    @Test
    void theJdkTakesTheFileAndOnlyPgChecksumGoesToC2() throws Exception {
        Path file = Path.of("jit-directives.json").toAbsolutePath();
        assertTrue(Files.isRegularFile(file), file + " is missing");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(List.of(java.toString(), "-XX:+UnlockDiagnosticVMOptions",
                "-XX:CompilerDirectivesFile=" + file, "-XX:+CompilerDirectivesPrint", "-version"))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.startsWith("2 compiler directives added"), out);
        // the directives in the file's order: PgChecksum's first (the first match wins), then every method
        String[] directives = out.split("\nDirective:");
        assertTrue(directives[1].contains("matching: org/pageio/bufmgr/page/PgChecksum.*"), directives[1]);
        assertTrue(c2(directives[1]).contains("Exclude:false"), directives[1]);
        assertTrue(directives[2].contains("matching: *.*"), directives[2]);
        assertTrue(c2(directives[2]).contains("Enable:true Exclude:true"), directives[2]);
    }

    private static String c2(String directive) {
        return directive.substring(directive.indexOf("c2 directives:"));
    }
}
