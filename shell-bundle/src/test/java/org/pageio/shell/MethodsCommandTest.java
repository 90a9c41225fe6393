package org.pageio.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.pageio.api.IoMethod;
import org.pageio.settings.MethodsTable;
import org.pageio.settings.RegisteredMethods;

/** {@code pageio:methods} with a method whose cause runs to 800 characters, as a seccomp refusal does. */
class MethodsCommandTest {

    private static final String LONG_CAUSE = "io_uring_setup failed: EPERM: the container's seccomp profile blocks io_uring; "
            + "x".repeat(800 - 79);

    /** A registered method that is not available here, for that cause. */
    private static final class Blocked implements IoMethod {
        @Override
        public Availability availability() {
            return Availability.unavailable(LONG_CAUSE);
        }

        @Override
        public String name() {
            return "blocked";
        }

        @Override
        public int submit(org.pageio.api.IoHandle[] handles, int count) {
            throw new UnsupportedOperationException();
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, java.util.function.BiFunction<String, Object[], Object> answer) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (p, m, args) -> switch (m.getName()) {
                    case "hashCode" -> System.identityHashCode(p);
                    case "equals" -> p == args[0];
                    case "toString" -> type.getSimpleName();
                    default -> answer.apply(m.getName(), args);
                });
    }

    private static MethodsCommand command() throws Exception {
        RegisteredMethods registered = new RegisteredMethods();
        Map<String, Object> props = Map.of(IoMethod.PROPERTY, "blocked", "service.id", 7L);
        ServiceReference<IoMethod> ref = proxy(ServiceReference.class, (name, args) -> switch (name) {
            case "getProperty" -> props.get((String) args[0]);
            default -> null;
        });
        Method add = RegisteredMethods.class.getDeclaredMethod("addMethod", ServiceReference.class, IoMethod.class);
        add.setAccessible(true);
        add.invoke(registered, ref, new Blocked());
        ServiceComponentRuntime scr = proxy(ServiceComponentRuntime.class, (name, args) -> switch (name) {
            case "getComponentDescriptionDTOs", "getComponentConfigurationDTOs" -> (Collection<?>) List.of();
            default -> null;
        });
        return new MethodsCommand(new MethodsTable(registered, scr));
    }

    @Test
    void aLongCauseIsANoteUnderANarrowTable() throws Exception {
        String text = command().methods("text");
        List<String> lines = text.lines().toList();
        assertTrue(lines.get(0).startsWith("method "), text);
        assertTrue(lines.get(2).startsWith("blocked | no "), text);
        for (String l : lines.subList(0, 3)) {
            assertTrue(l.length() < 150, "a table line stays narrow (" + l.length() + "): " + l);
        }
        assertTrue(lines.get(2).contains("io_uring_setup failed: EPERM: the container's seccomp… (1)"), lines.get(2));
        assertEquals("(1) " + LONG_CAUSE, lines.get(3), text);
        assertEquals(4, lines.size(), text);
    }

    @Test
    void jsonKeepsTheWholeCauseInTheRow() throws Exception {
        String json = command().methods("json");
        assertTrue(json.contains("\"cause\": \"" + LONG_CAUSE + "\""), json);
        assertTrue(!json.contains("(1)"), json);
    }
}
