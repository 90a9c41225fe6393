package org.pageio.soak;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.api.IoMethod;
import org.pageio.settings.DataDirectory;
import org.pageio.settings.RegisteredMethods;
import org.pageio.shell.command.CommandUsage;
import org.pageio.shell.command.Commands;

/**
 * {@code pageio:soak}: reads and writes on a generated relation, checked byte for byte against a
 * model, while the I/O method is hot-swapped round every available method, each under a fault
 * plan, with checkpoints and the background writer running ({@link Soak}). Runs its own buffer
 * manager over {@code <data>/soak}, never the container's. Progress to stderr; the counts are the
 * command's value, and a soak that found something wrong fails the command with them. While it
 * runs, the buffer manager's WARNING lines (one per failed write: thousands under the faults) are
 * muted; the soak counts those errors itself.
 */
@Component(service = SoakCommand.class, property = {
        Commands.SCOPE + "=" + Commands.PAGEIO,
        Commands.FUNCTION + "=soak"
})
public final class SoakCommand {

    private final Map<ServiceReference<IoMethod>, IoMethod> methods;
    private final BundleContext context;

    static final CommandUsage USAGE = new CommandUsage("pageio:soak",
            "pageio:soak [--minutes N] [--sessions 1..32] [--swap-every MS] [--seed N]");

    @Activate
    public SoakCommand(BundleContext context, @Reference RegisteredMethods registered) {
        this.context = context;
        this.methods = registered.all();
    }

    @Descriptor("soak: sessions read and write a relation checked against a model while io_method is hot-swapped round every"
            + " available method under faults (EIO, short reads and writes, delays, reordering); ends with the counts")
    public String soak(
            @Descriptor("how long, in minutes (default 1; fractions allowed)")
            @Parameter(names = {"--minutes"}, absentValue = "1") String minutesText,
            @Descriptor("sessions, each on its own thread (default 4)")
            @Parameter(names = {"--sessions"}, absentValue = "4") String sessionsText,
            @Descriptor("milliseconds between two hot swaps (default 500)")
            @Parameter(names = {"--swap-every"}, absentValue = "500") String swapEveryText,
            @Descriptor("seed of the operations and the faults (default: a new one, printed)")
            @Parameter(names = {"--seed"}, absentValue = "0") String seedText) throws IOException {
        double minutes;
        try {
            minutes = Double.parseDouble(minutesText.strip());
        } catch (NumberFormatException e) {
            minutes = Double.NaN;
        }
        if (!(minutes > 0 && minutes <= 24 * 60)) {
            throw USAGE.error("--minutes takes a number of minutes above 0, up to 1440 (got \"" + minutesText + "\")");
        }
        int sessions = USAGE.wholeInt("--sessions", "sessions", sessionsText, 1, 32);
        long swapEvery = USAGE.whole("--swap-every", "milliseconds", swapEveryText, 10, 3_600_000);
        long seed = USAGE.whole("--seed", "", seedText, Long.MIN_VALUE, Long.MAX_VALUE);
        List<IoMethod> available = new ArrayList<>();
        for (IoMethod m : byName().values()) {
            if (!m.name().equals("fault") && m.availability().available()) {
                available.add(m);
            }
        }
        long s = seed != 0 ? seed : System.nanoTime();
        Path dir = DataDirectory.createPrivate(DataDirectory.of(context).resolve("soak"));
        System.err.println("soak: " + minutes + " min over " + available.stream().map(IoMethod::name).toList() + ", "
                + sessions + " sessions, a swap every " + swapEvery + " ms, seed " + s + ", in " + dir);
        // The buffer manager logs each failed write at WARNING; under injected faults that is thousands of
        // lines the soak counts itself. Muted while it runs, restored after.
        java.util.logging.Logger bufmgrLog = java.util.logging.Logger.getLogger("org.pageio.bufmgr");
        java.util.logging.Level level = bufmgrLog.getLevel();
        bufmgrLog.setLevel(java.util.logging.Level.SEVERE);
        Soak.Result r;
        try {
            r = Soak.run(new Soak.Options(dir, (long) (minutes * 60_000), sessions, s, available, swapEvery, System.err));
        } finally {
            bufmgrLog.setLevel(level);
        }
        if (!r.ok()) {
            throw new IllegalStateException(r + " (seed " + s + ")");
        }
        return r.toString();
    }

    private Map<String, IoMethod> byName() {
        Map<String, IoMethod> m = new TreeMap<>();
        methods.forEach((ref, method) -> m.putIfAbsent(method.name(), method));
        return m;
    }
}
