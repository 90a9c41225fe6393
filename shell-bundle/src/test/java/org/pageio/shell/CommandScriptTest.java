package org.pageio.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;

class CommandScriptTest {

    @Test
    void splitsAtSemicolonsAndNewlines() {
        assertEquals(List.of("pageio:methods", "lb", "echo hi"),
                CommandScript.split(" pageio:methods ;lb\n\n echo hi ;; "));
    }

    @Test
    void keepsQuotesClosuresAndEscapesWhole() {
        assertEquals(List.of("echo 'a;b'", "echo \"c;d\"", "each [1 2] { echo $it; echo x }", "echo e\\;f"),
                CommandScript.split("echo 'a;b'; echo \"c;d\"\neach [1 2] { echo $it; echo x }; echo e\\;f"));
    }

    @Test
    void dropsCommentsAndBlanks() {
        assertEquals(List.of("lb"), CommandScript.split("# a comment\n  \nlb\n"));
        assertEquals(List.of(), CommandScript.split(""));
    }
}
