package org.pageio.settings;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.ComponentConstants;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;
import org.osgi.service.component.runtime.dto.ReferenceDTO;
import org.osgi.service.component.runtime.dto.UnsatisfiedReferenceDTO;
import org.pageio.api.IoMethod;
import org.pageio.report.TextTable;

/**
 * The methods table that {@code pageio:methods} and the Web Console page show: every registered {@link IoMethod} service, with
 * whether it can run here and, when it cannot, why; and every Declarative Services component
 * providing {@code IoMethod} whose service is not registered, as SCR's
 * {@link ServiceComponentRuntime} reports it: {@code activating} (satisfied, its service on the
 * way), {@code unsatisfied: <reference>} or {@code unsatisfied: configuration}, {@code failed}
 * (its activation threw) or {@code disabled}, with the cause. A method bundle just dropped in is
 * thus listed while it comes up instead of missing.
 */
@Component(service = MethodsTable.class)
public final class MethodsTable {

    static final String[] HEADER = {"method", "available", "state", "cause", "bundle"};
    /** The state of a method whose service is registered. */
    static final String REGISTERED = "registered";
    /** The state of a method component that is satisfied but whose service is not registered yet. */
    static final String ACTIVATING = "activating";

    private final Map<ServiceReference<IoMethod>, IoMethod> methods;
    private final ServiceComponentRuntime scr;

    @Activate
    public MethodsTable(@Reference RegisteredMethods registered, @Reference ServiceComponentRuntime scr) {
        this.methods = registered.all();
        this.scr = scr;
    }

    /** A row of the table. */
    record Row(String name, long serviceId, boolean available, String state, String cause, String bundle) {}

    /** The table, sorted by method name (then service id; components not registered last). */
    public TextTable table() {
        List<Row> rows = new ArrayList<>();
        Set<Object> registeredComponents = new HashSet<>();
        methods.forEach((ref, method) -> {
            Object component = ref.getProperty(ComponentConstants.COMPONENT_ID);
            if (component != null) {
                registeredComponents.add(component);
            }
            String name = nameOf(ref, method);
            boolean available;
            String cause;
            try {
                IoMethod.Availability a = method.availability();
                available = a != null && a.available();
                cause = a == null ? "availability() returned null" : a.cause();
            } catch (RuntimeException | LinkageError e) {
                available = false;
                cause = "availability() failed: " + e;
            }
            Object id = ref.getProperty("service.id");
            rows.add(new Row(name, id instanceof Long l ? l : -1L, available, REGISTERED, cause, bundleOf(ref)));
        });
        rows.addAll(notRegistered(scr.getComponentDescriptionDTOs(), scr::getComponentConfigurationDTOs,
                scr::isComponentEnabled, registeredComponents));
        rows.sort(Comparator.comparing(Row::name).thenComparingLong(r -> r.serviceId() < 0 ? Long.MAX_VALUE : r.serviceId()));
        TextTable table = new TextTable(HEADER);
        for (Row r : rows) {
            table.row(r.name(), r.available(), r.state(), r.cause(), r.bundle());
        }
        return table;
    }

    /**
     * The rows of the components that provide {@code IoMethod} and have no registered service:
     * each configuration of such a component that is not among {@code registered} (the
     * {@code component.id}s of the services listed), or the component itself when SCR holds no
     * configuration of it.
     */
    static List<Row> notRegistered(Collection<ComponentDescriptionDTO> descriptions,
            Function<ComponentDescriptionDTO, Collection<ComponentConfigurationDTO>> configurations,
            Predicate<ComponentDescriptionDTO> enabled, Set<Object> registered) {
        List<Row> rows = new ArrayList<>();
        for (ComponentDescriptionDTO d : descriptions) {
            if (d.serviceInterfaces == null || !Arrays.asList(d.serviceInterfaces).contains(IoMethod.class.getName())) {
                continue;
            }
            String bundle = d.bundle == null ? "?" : d.bundle.symbolicName + " " + d.bundle.version + " [" + d.bundle.id + "]";
            if (!enabled.test(d)) {
                rows.add(new Row(methodName(d, null), -1, false, "disabled",
                        "component " + d.name + " is disabled in Declarative Services", bundle));
                continue;
            }
            Collection<ComponentConfigurationDTO> cs = configurations.apply(d);
            if (cs.isEmpty()) {
                boolean needsConfiguration = "require".equals(d.configurationPolicy);
                rows.add(new Row(methodName(d, null), -1, false,
                        needsConfiguration ? "unsatisfied: configuration" : ACTIVATING,
                        needsConfiguration ? needsConfiguration(d) : "component " + d.name + " is being created", bundle));
                continue;
            }
            for (ComponentConfigurationDTO c : cs) {
                if (registered.contains(c.id)) {
                    continue;
                }
                String state;
                String cause;
                switch (c.state) {
                    case ComponentConfigurationDTO.SATISFIED, ComponentConfigurationDTO.ACTIVE -> {
                        state = ACTIVATING;
                        cause = "component " + d.name + " is satisfied; its service is being registered";
                    }
                    case ComponentConfigurationDTO.UNSATISFIED_CONFIGURATION -> {
                        state = "unsatisfied: configuration";
                        cause = needsConfiguration(d);
                    }
                    case ComponentConfigurationDTO.UNSATISFIED_REFERENCE -> {
                        state = "unsatisfied: " + String.join(", ",
                                Arrays.stream(c.unsatisfiedReferences).map(u -> u.name).toList());
                        cause = unsatisfied(d, c.unsatisfiedReferences);
                    }
                    case ComponentConfigurationDTO.FAILED_ACTIVATION -> {
                        state = "failed";
                        cause = c.failure == null ? "its activation failed" : c.failure.strip().lines().findFirst().orElse("");
                    }
                    default -> {
                        state = "state " + c.state;
                        cause = null;
                    }
                }
                rows.add(new Row(methodName(d, c), -1, false, state, cause, bundle));
            }
        }
        return rows;
    }

    private static String needsConfiguration(ComponentDescriptionDTO d) {
        return "component " + d.name + " needs a configuration of PID " + String.join(", ", d.configurationPid);
    }

    /** "reference delegate needs an org.pageio.api.IoMethod service matching (io.method=sync)", for each. */
    private static String unsatisfied(ComponentDescriptionDTO d, UnsatisfiedReferenceDTO[] references) {
        List<String> parts = new ArrayList<>();
        for (UnsatisfiedReferenceDTO u : references) {
            String type = Arrays.stream(d.references == null ? new ReferenceDTO[0] : d.references)
                    .filter(r -> r.name.equals(u.name)).map(r -> r.interfaceName).findFirst().orElse("?");
            parts.add("reference " + u.name + " needs a " + type + " service"
                    + (u.target == null || u.target.isBlank() ? "" : " matching " + u.target));
        }
        return String.join("; ", parts);
    }

    /** The component's {@code io.method} property (its configuration's first), else its name. */
    private static String methodName(ComponentDescriptionDTO d, ComponentConfigurationDTO c) {
        Object p = c == null || c.properties == null ? null : c.properties.get(IoMethod.PROPERTY);
        if (p == null && d.properties != null) {
            p = d.properties.get(IoMethod.PROPERTY);
        }
        return p instanceof String s && !s.isBlank() ? s : d.name + " (no " + IoMethod.PROPERTY + " property)";
    }

    private static String nameOf(ServiceReference<IoMethod> ref, IoMethod method) {
        Object p = ref.getProperty(IoMethod.PROPERTY);
        if (p instanceof String s && !s.isBlank()) {
            return s;
        }
        try {
            return method.name() + " (no " + IoMethod.PROPERTY + " property)";
        } catch (RuntimeException e) {
            return "? (no " + IoMethod.PROPERTY + " property)";
        }
    }

    private static String bundleOf(ServiceReference<?> ref) {
        Bundle b = ref.getBundle();
        if (b == null) {
            return "(unregistered)";
        }
        return b.getSymbolicName() + " " + b.getVersion() + " [" + b.getBundleId() + "]";
    }
}
