package org.pageio.settings;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.InvocationTargetException;

import org.junit.jupiter.api.Test;

class ContainerTest {

    @Test
    void messageIsOneLineFromTheRootCause() {
        assertEquals("Command not found: pageio:nosuchcommand",
                Container.message(new IllegalArgumentException("Command not found: pageio:nosuchcommand")));
        assertEquals("bad thing happened",
                Container.message(new InvocationTargetException(new IllegalStateException("bad thing\n  happened"))));
        assertEquals("IllegalStateException", Container.message(new IllegalStateException()));
        assertEquals("NullPointerException: x is null", Container.message(new NullPointerException("x is null")));
    }
}
