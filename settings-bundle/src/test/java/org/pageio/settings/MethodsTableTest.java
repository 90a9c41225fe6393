package org.pageio.settings;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.osgi.framework.dto.BundleDTO;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;
import org.osgi.service.component.runtime.dto.ReferenceDTO;
import org.osgi.service.component.runtime.dto.UnsatisfiedReferenceDTO;
import org.pageio.api.IoMethod;

/** How {@code pageio:methods} lists method components SCR knows whose service is not registered. */
class MethodsTableTest {

    private static ComponentDescriptionDTO description(String name, String method, String... services) {
        ComponentDescriptionDTO d = new ComponentDescriptionDTO();
        d.name = name;
        d.serviceInterfaces = services;
        d.properties = method == null ? Map.of() : Map.of(IoMethod.PROPERTY, method);
        d.configurationPolicy = "optional";
        d.configurationPid = new String[] {name};
        ReferenceDTO delegate = new ReferenceDTO();
        delegate.name = "delegate";
        delegate.interfaceName = IoMethod.class.getName();
        d.references = new ReferenceDTO[] {delegate};
        d.bundle = new BundleDTO();
        d.bundle.symbolicName = "org.example.m";
        d.bundle.version = "1.0.0";
        d.bundle.id = 42;
        return d;
    }

    private static ComponentConfigurationDTO configuration(ComponentDescriptionDTO d, long id, int state) {
        ComponentConfigurationDTO c = new ComponentConfigurationDTO();
        c.description = d;
        c.id = id;
        c.state = state;
        c.properties = d.properties;
        c.unsatisfiedReferences = new UnsatisfiedReferenceDTO[0];
        return c;
    }

    private static List<MethodsTable.Row> rows(ComponentDescriptionDTO d, List<ComponentConfigurationDTO> cs, Set<Object> registered) {
        return MethodsTable.notRegistered(List.of(d), x -> cs, x -> true, registered);
    }

    @Test
    void aSatisfiedComponentWithoutItsServiceIsActivating() {
        ComponentDescriptionDTO d = description("org.example.M", "mine", IoMethod.class.getName());
        List<MethodsTable.Row> rows = rows(d, List.of(configuration(d, 7, ComponentConfigurationDTO.SATISFIED)), Set.of());
        assertEquals(List.of(new MethodsTable.Row("mine", -1, false, "activating",
                "component org.example.M is satisfied; its service is being registered", "org.example.m 1.0.0 [42]")), rows);
    }

    @Test
    void aComponentWhoseServiceIsListedIsNotListedAgain() {
        ComponentDescriptionDTO d = description("org.example.M", "mine", IoMethod.class.getName());
        assertEquals(List.of(), rows(d, List.of(configuration(d, 7, ComponentConfigurationDTO.ACTIVE)), Set.of(7L)));
    }

    @Test
    void anUnsatisfiedReferenceIsNamedWithItsTarget() {
        ComponentDescriptionDTO d = description("org.example.M", "mine", IoMethod.class.getName());
        ComponentConfigurationDTO c = configuration(d, 7, ComponentConfigurationDTO.UNSATISFIED_REFERENCE);
        UnsatisfiedReferenceDTO u = new UnsatisfiedReferenceDTO();
        u.name = "delegate";
        u.target = "(io.method=nosuch)";
        c.unsatisfiedReferences = new UnsatisfiedReferenceDTO[] {u};
        MethodsTable.Row row = rows(d, List.of(c), Set.of()).getFirst();
        assertEquals("unsatisfied: delegate", row.state());
        assertEquals("reference delegate needs a org.pageio.api.IoMethod service matching (io.method=nosuch)", row.cause());
    }

    @Test
    void failedDisabledAndConfigurationLessComponentsSayWhy() {
        ComponentDescriptionDTO d = description("org.example.M", null, IoMethod.class.getName());
        ComponentConfigurationDTO c = configuration(d, 7, ComponentConfigurationDTO.FAILED_ACTIVATION);
        c.failure = "java.lang.IllegalStateException: no ring\n\tat org.example.M.activate(M.java:1)";
        MethodsTable.Row failed = rows(d, List.of(c), Set.of()).getFirst();
        assertEquals("org.example.M (no io.method property)", failed.name());
        assertEquals("failed", failed.state());
        assertEquals("java.lang.IllegalStateException: no ring", failed.cause());

        d.configurationPolicy = "require";
        MethodsTable.Row waiting = rows(d, List.of(), Set.of()).getFirst();
        assertEquals("unsatisfied: configuration", waiting.state());
        assertEquals("component org.example.M needs a configuration of PID org.example.M", waiting.cause());

        MethodsTable.Row disabled = MethodsTable.notRegistered(List.of(d), x -> List.of(), x -> false, Set.of()).getFirst();
        assertEquals("disabled", disabled.state());
    }

    @Test
    void componentsOfOtherServicesAreNotMethods() {
        ComponentDescriptionDTO d = description("org.example.Other", null, Runnable.class.getName());
        assertEquals(List.of(), rows(d, List.of(configuration(d, 7, ComponentConfigurationDTO.SATISFIED)), Set.of()));
    }
}
