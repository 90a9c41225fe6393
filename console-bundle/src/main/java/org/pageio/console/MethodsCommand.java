package org.pageio.console;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.api.IoMethod;

/**
 * {@code pageio:methods [--format text|json]}: every registered {@link IoMethod} service, with
 * whether it can run here and, when it cannot, why.
 */
@Component(service = MethodsCommand.class, property = {
        Commands.SCOPE + "=" + Commands.PAGEIO,
        Commands.FUNCTION + "=methods"
})
public final class MethodsCommand {

    static final String[] HEADER = {"method", "available", "cause", "bundle"};

    private final Map<ServiceReference<IoMethod>, IoMethod> methods;

    @Activate
    public MethodsCommand(@Reference RegisteredMethods registered) {
        this.methods = registered.all();
    }

    @Descriptor("lists the registered I/O methods (io_method), whether each can run here, and why not")
    public String methods(
            @Descriptor("output format: text (default) or json")
            @Parameter(names = {"-f", "--format"}, absentValue = "text") String format) {
        TextTable table = table();
        return switch (format.toLowerCase(Locale.ROOT)) {
            case "text" -> table.toString().stripTrailing();
            case "json" -> table.toJson().stripTrailing();
            default -> throw new IllegalArgumentException("unknown format '" + format + "': use text or json");
        };
    }

    /** The table, sorted by method name (then service id). */
    public TextTable table() {
        record Row(String name, long serviceId, boolean available, String cause, String bundle) {}
        List<Row> rows = new ArrayList<>();
        methods.forEach((ref, method) -> {
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
            rows.add(new Row(name, id instanceof Long l ? l : -1L, available, cause, bundleOf(ref)));
        });
        rows.sort(Comparator.comparing(Row::name).thenComparingLong(Row::serviceId));
        TextTable table = new TextTable(HEADER);
        for (Row r : rows) {
            table.row(r.name(), r.available(), r.cause(), r.bundle());
        }
        return table;
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
