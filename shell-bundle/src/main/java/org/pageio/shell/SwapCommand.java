package org.pageio.shell;

import java.io.IOException;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.api.IoMethod;
import org.pageio.api.MethodSwap;
import org.pageio.bufmgr.MethodStatus;
import org.pageio.report.Json;
import org.pageio.report.TextTable;
import org.pageio.settings.MethodSwitch;
import org.pageio.settings.RegisteredMethods;
import org.pageio.shell.command.Commands;

/**
 * {@code pageio:swap [--format text|json] METHOD}: hot swap of the I/O method while scans run.
 * Stores {@code io_method} through ConfigAdmin (as {@code pageio:set io_method} does), waits
 * until the buffer manager drained the old method's I/O and rebound (the pool and its cached
 * pages stay), and prints what happened: from, to, the method epoch, how long new I/O was held
 * at the gate, the sessions and I/Os waited for. Refused, with the old method kept, when the
 * method is not registered, not available here, or the swap timed out.
 */
@Component(service = SwapCommand.class, property = {
        Commands.SCOPE + "=" + Commands.PAGEIO,
        Commands.FUNCTION + "=swap"
})
public final class SwapCommand {

    static final String[] HEADER = {"from", "to", "epoch", "pause_ms", "sessions_waited", "ios_drained", "fallback"};

    private final BundleContext context;
    private final ConfigurationAdmin configAdmin;
    private final Map<ServiceReference<IoMethod>, IoMethod> methods;

    @Activate
    public SwapCommand(BundleContext context, @Reference ConfigurationAdmin configAdmin,
            @Reference RegisteredMethods registered) {
        this.context = context;
        this.methods = registered.all();
        this.configAdmin = configAdmin;
    }

    @Descriptor("swaps the I/O method while scans run (hot swap): drains the I/O in flight, keeps the cached pages,"
            + " rebinds; stored as io_method")
    public String swap(
            @Descriptor("output format: text (default) or json")
            @Parameter(names = {"-f", "--format"}, absentValue = "text") String format,
            @Descriptor("the method: sync, worker, io_uring, direct, or another registered one") String method)
            throws IOException {
        boolean json = Json.requested(format);
        check(method);
        MethodStatus before = MethodSwitch.bufferManager(context).methodStatus();
        TextTable t = new TextTable(HEADER).alignRight(2, 3, 4, 5);
        if (method.equals(before.method()) && method.equals(before.wanted())) {
            t.row(method, method, before.epoch(), "0.000", 0, 0, before.fallback());
        } else {
            MethodStatus after = MethodSwitch.switchTo(context, configAdmin, method);
            MethodSwap s = after.lastSwap();
            t.row(s.from() == null ? "none" : s.from(), s.to(), s.epoch(), String.format(Locale.ROOT, "%.3f", s.pauseMillis()),
                    s.sessionsWaitedFor(), s.iosDrained(), after.fallback());
        }
        return json ? t.toJson().stripTrailing() : t.toString().stripTrailing();
    }

    /** Registered and available here, else one line naming what is. */
    private void check(String method) {
        Map<String, String> known = new TreeMap<>();
        String cause = null;
        boolean found = false;
        for (Map.Entry<ServiceReference<IoMethod>, IoMethod> e : methods.entrySet()) {
            String name = String.valueOf(e.getKey().getProperty(IoMethod.PROPERTY));
            IoMethod.Availability a;
            try {
                a = e.getValue().availability();
            } catch (RuntimeException | LinkageError x) {
                a = IoMethod.Availability.unavailable("availability() failed: " + x);
            }
            boolean ok = a != null && a.available();
            known.put(name, ok ? "available" : "not available");
            if (name.equals(method)) {
                found = true;
                if (!ok) {
                    cause = a == null ? "no availability" : a.cause();
                }
            }
        }
        if (!found) {
            throw new IllegalArgumentException("io_method '" + method + "' is not registered; registered methods: "
                    + (known.isEmpty() ? "none" : String.join(", ", known.keySet())) + "; io_method stays as it is");
        }
        if (cause != null) {
            throw new IllegalArgumentException("io_method " + method + " cannot run here: " + cause
                    + "; io_method stays as it is");
        }
    }
}
