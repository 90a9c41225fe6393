package org.pageio.console;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.InvocationTargetException;

import org.junit.jupiter.api.Test;

class ExecRunnerTest {

    @Test
    void messageIsOneLineFromTheRootCause() {
        assertEquals("Command not found: pageio:nosuchcommand",
                ExecRunner.message(new IllegalArgumentException("Command not found: pageio:nosuchcommand")));
        assertEquals("bad thing happened",
                ExecRunner.message(new InvocationTargetException(new IllegalStateException("bad thing\n  happened"))));
        assertEquals("IllegalStateException", ExecRunner.message(new IllegalStateException()));
        assertEquals("NullPointerException: x is null", ExecRunner.message(new NullPointerException("x is null")));
    }
}
