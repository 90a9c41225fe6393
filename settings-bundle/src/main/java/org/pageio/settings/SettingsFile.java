package org.pageio.settings;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.FrameworkListener;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.SharedMemory;
import org.pageio.report.TextTable;

/**
 * The settings file {@code <pageio.data>/conf/org.pageio.settings.cfg}: PostgreSQL's names and
 * units, one {@code NAME = VALUE} a line, like {@code postgresql.conf}. Apache Felix FileInstall
 * watches {@code <pageio.data>/conf} (framework property {@code felix.fileinstall.dir}, see
 * {@code app/pageio.bndrun}) and turns the file into the configuration {@value #PID}; this
 * component receives it at start and at every change and hands it to
 * {@link SettingsService#applyFile}, which validates each line exactly as {@code pageio:set} does
 * and stores the accepted values in the real PIDs ({@code org.pageio.bufmgr},
 * {@code org.pageio.method.worker}). FileInstall never writes the real PIDs, so an invalid line
 * never reaches the buffer manager: it is refused (one line on stderr, and in
 * {@code pageio:settings}) and the old value stays in force.
 *
 * <p>{@code pageio:set} and the Web Console form save their values here ({@link #save}), so they
 * survive a restart (the framework storage, and with it ConfigAdmin's, is temporary).
 */
@Component(immediate = true, service = {}, configurationPid = SettingsFile.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
public final class SettingsFile {

    /** The configuration FileInstall makes of {@code conf/org.pageio.settings.cfg}. */
    public static final String PID = "org.pageio.settings";
    public static final String FILE_NAME = PID + ".cfg";
    /** FileInstall's property naming the file a configuration came from. */
    static final String FILENAME_PROPERTY = "felix.fileinstall.filename";

    /** Counted down once the file (or its absence) has been applied after the start; the exec runner waits for it. */
    private static final CountDownLatch APPLIED = new CountDownLatch(1);

    private final SettingsService settings;
    private final BundleContext context;
    private final FrameworkListener started = this::frameworkEvent;
    /** The file's configuration last received, applied again when the container has started or a method registers. */
    private volatile Map<String, Object> last;
    /** Refusals already printed (each is printed once while it stands). */
    private static final Set<String> PRINTED = ConcurrentHashMap.newKeySet();
    /** The refusals of the file's last application, in line order. */
    private static volatile List<String> standing = List.of();

    @Activate
    public SettingsFile(@Reference SettingsService settings, BundleContext context, Map<String, Object> config) {
        this.settings = settings;
        this.context = context;
        Path file = path(context);
        try {
            if (!Files.exists(file)) {
                writeTemplate(file, settings.table());
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("pageio: cannot create the settings file " + file + ": " + e.getMessage());
        }
        context.addFrameworkListener(started);
        apply(config);
        if (config.get(FILENAME_PROPERTY) == null && !fileInstallActive(context)) {
            APPLIED.countDown(); // nobody will read the file: do not make the exec runner wait
        }
    }

    @Modified
    void modified(Map<String, Object> config) {
        apply(config);
    }

    @Deactivate
    void deactivate() {
        try {
            context.removeFrameworkListener(started);
        } catch (IllegalStateException stopping) {
            // the bundle is stopping
        }
    }

    /**
     * A method bundle that registers later (io_method = io_uring in the file names a method whose
     * bundle starts after this one): apply the file again once the container has started.
     */
    @Reference(service = IoMethod.class, cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addMethod(ServiceReference<IoMethod> ref) {
        Map<String, Object> c = last;
        SettingsService.FileReport r = settings.fileReport();
        if (c != null && r != null && r.refused().stream().anyMatch(m -> aboutMethod(m, r.file()))
                && Container.settled(context)) {
            apply(c); // only for a refused io_method: a stale copy must not undo what pageio:set just did
        }
    }

    void removeMethod(ServiceReference<IoMethod> ref) {
        // the method in force stays configured; the buffer manager reports it missing
    }

    /** The start levels have been climbed: every method bundle has registered; apply (and report) now. */
    private void frameworkEvent(FrameworkEvent e) {
        Map<String, Object> c = last;
        if (c != null && (e.getType() == FrameworkEvent.STARTED || e.getType() == FrameworkEvent.STARTLEVEL_CHANGED)) {
            apply(c);
        }
    }

    /**
     * What makes two refusals the same one: a shared_buffers the machine cannot map is refused
     * naming the memory available now, which changes from one application of the file to the
     * next; up to that part it is the same refusal, printed once.
     */
    static String printedKey(String refusal) {
        int cut = refusal.indexOf(SharedMemory.TOO_LARGE);
        return cut < 0 ? refusal : refusal.substring(0, cut);
    }

    /**
     * Hands the file's values to {@link SettingsService#applyFile} and prints each refusal once.
     * Until the container has started (method bundles start after this one) an {@code io_method}
     * refusal is kept, not printed: the application that follows the start prints it if it stands.
     */
    private synchronized void apply(Map<String, Object> config) {
        last = config;
        Object from = config.get(FILENAME_PROPERTY);
        String fileName = from == null ? path(context).toString() : String.valueOf(from).replaceFirst("^file:", "");
        boolean settled = Container.settled(context);
        try {
            List<String> text = lines(Path.of(fileName));
            List<String> refused = settings.applyFile(config, fileName, lineNumbers(text), syntaxErrors(text));
            standing = refused;
            PRINTED.retainAll(refused.stream().map(SettingsFile::printedKey).toList());
            for (String refusal : refused) {
                // an io_method refused before the method bundles have started may be taken later
                boolean early = !settled && aboutMethod(refusal, fileName);
                if (!early && PRINTED.add(printedKey(refusal))) {
                    System.err.println("pageio: " + refusal);
                }
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("pageio: " + fileName + ": the settings could not be applied: " + e.getMessage());
        }
        if (from != null) {
            // the exec runner has waited for the start levels too; a refused io_method is applied
            // again at STARTLEVEL_CHANGED, on the event thread, before the runner's quiet period ends
            APPLIED.countDown();
        }
    }

    /**
     * Whether a refusal ({@code FILE:LINE: message}) is about {@code io_method}; neither the file's
     * path nor the list of known names that an unknown setting's refusal ends with counts.
     */
    static boolean aboutMethod(String refusal, String file) {
        String m = refusal.startsWith(file) ? refusal.substring(file.length()) : refusal;
        int known = m.indexOf("; known: ");
        return (known < 0 ? m : m.substring(0, known)).contains(Setting.IO_METHOD);
    }

    /**
     * The refusals of the settings file's last application ({@code FILE:LINE: message}, in line
     * order; empty when every line was taken), after printing on stderr those not printed yet (an
     * {@code io_method} line refused before the method bundles started is printed only once it
     * stands). The exec runner asks after the start: the file's values are not all in force.
     */
    public static List<String> standingRefusals() {
        List<String> r = standing;
        for (String refusal : r) {
            if (PRINTED.add(printedKey(refusal))) {
                System.err.println("pageio: " + refusal);
            }
        }
        return r;
    }

    /** {@link #lineNumbers(List)} of {@code file}; empty when it cannot be read (the refusals then name the file only). */
    static Map<String, Integer> lineNumbers(Path file) {
        return lineNumbers(lines(file));
    }

    /** The file's lines as FileInstall reads them; empty when it cannot be read. */
    static List<String> lines(Path file) {
        try {
            // FileInstall reads a .cfg file as ISO 8859-1: every byte is a character, no line fails to decode
            return Files.readAllLines(file, StandardCharsets.ISO_8859_1);
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }

    /**
     * The lines that are not {@code NAME = VALUE} (nor PostgreSQL's {@code NAME VALUE}, one word
     * after the name), by line number (1-based), each as written: FileInstall reads {@code this is
     * garbage} as the name {@code this} with the value {@code is garbage}, so only the file's own
     * lines can tell a line that is no setting at all from an unknown setting. A line that continues
     * on the next (ending in an odd number of backslashes) and the lines it continues on are not
     * judged.
     */
    static Map<Integer, String> syntaxErrors(List<String> lines) {
        Map<Integer, String> errors = new java.util.TreeMap<>();
        for (PropertiesLine l : propertiesLines(lines)) {
            if (l.continuation() || l.continues() || l.comment() || l.text().isEmpty()) {
                continue;
            }
            String t = l.text().strip();
            int j = 0;
            while (j < t.length() && " \t\f=:".indexOf(t.charAt(j)) < 0) {
                j += t.charAt(j) == '\\' && j + 1 < t.length() ? 2 : 1;
            }
            String rest = t.substring(j).stripLeading();
            boolean separated = rest.startsWith("=") || rest.startsWith(":");
            boolean oneWord = !rest.isEmpty() && rest.chars().noneMatch(Character::isWhitespace);
            if (j == 0 || !separated && !oneWord) {
                errors.put(l.number(), t);
            }
        }
        return errors;
    }

    /** The refusal of a line that is not {@code NAME = VALUE}. */
    static String syntaxError(String fileName, int line, String text) {
        return fileName + ":" + line + ": syntax error: expected NAME = VALUE, got \"" + text + "\"";
    }

    /**
     * The line (1-based) that sets each name, read as FileInstall reads the file (Java properties):
     * {@code #} and {@code !} start a comment, the name ends at the first unescaped blank, {@code =}
     * or {@code :}, a line ending in an odd number of backslashes continues on the next one, and of
     * two lines setting one name the last wins.
     */
    static Map<String, Integer> lineNumbers(List<String> lines) {
        Map<String, Integer> at = new java.util.HashMap<>();
        for (PropertiesLine l : propertiesLines(lines)) {
            if (l.continuation() || l.comment() || l.text().isEmpty()) {
                continue;
            }
            String t = l.text();
            StringBuilder name = new StringBuilder();
            for (int j = 0; j < t.length(); j++) {
                char c = t.charAt(j);
                if (c == '\\' && j + 1 < t.length()) {
                    name.append(t.charAt(++j));
                } else if (c == ' ' || c == '\t' || c == '\f' || c == '=' || c == ':') {
                    break;
                } else {
                    name.append(c);
                }
            }
            at.put(name.toString().strip(), l.number());
        }
        return at;
    }

    /**
     * A line of the file as Java properties (FileInstall) read it: its number (1-based), its text
     * without leading blanks, whether it is a comment ({@code #} or {@code !} first, unless it
     * continues a line), whether it continues the line before, and whether it continues on the
     * next (it ends in an odd number of backslashes and is no comment).
     */
    record PropertiesLine(int number, String text, boolean comment, boolean continuation, boolean continues) {}

    /** {@code lines} as {@link PropertiesLine}s, in order. */
    static List<PropertiesLine> propertiesLines(List<String> lines) {
        List<PropertiesLine> out = new java.util.ArrayList<>(lines.size());
        boolean continued = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            boolean continuation = continued;
            int backslashes = 0;
            for (int j = line.length() - 1; j >= 0 && line.charAt(j) == '\\'; j--) {
                backslashes++;
            }
            String t = line.stripLeading();
            boolean comment = !continuation && (t.startsWith("#") || t.startsWith("!"));
            continued = !comment && backslashes % 2 == 1;
            out.add(new PropertiesLine(i + 1, t, comment, continuation, continued));
        }
        return out;
    }

    /** Waits (at most {@code millis}) until the settings file has been applied once after the start. */
    public static boolean awaitApplied(long millis) throws InterruptedException {
        return APPLIED.await(millis, TimeUnit.MILLISECONDS);
    }

    private static boolean fileInstallActive(BundleContext context) {
        for (Bundle b : context.getBundles()) {
            if ("org.apache.felix.fileinstall".equals(b.getSymbolicName())
                    && (b.getState() & (Bundle.ACTIVE | Bundle.STARTING)) != 0) {
                return true;
            }
        }
        return false;
    }

    /** {@code <pageio.data>/conf/org.pageio.settings.cfg}. */
    static Path path(BundleContext context) {
        return DataDirectory.of(context).resolve("conf").resolve(FILE_NAME);
    }

    /**
     * Sets {@code name = value} in the file: replaces the line that sets {@code name} (commented
     * out or not; the first one), else appends one, and notes who set it when. Written to a
     * temporary file first and moved into place, so FileInstall never reads half a file.
     */
    static synchronized void save(Path file, String name, String value, String who) throws IOException {
        if (value.indexOf('\n') >= 0 || value.indexOf('\r') >= 0) {
            throw new IllegalArgumentException("a value cannot span lines");
        }
        DataDirectory.createPrivate(file.getParent());
        List<String> lines = Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : new ArrayList<>();
        String line = name + " = " + value.replace("\\", "\\\\");
        String note = "# " + who + ", " + Instant.now().truncatedTo(ChronoUnit.SECONDS);
        int at = -1;
        for (int i = 0; i < lines.size() && at < 0; i++) {
            if (isActive(lines.get(i), name)) {
                at = i;
            }
        }
        for (int i = 0; i < lines.size() && at < 0; i++) {
            if (isCommented(lines.get(i), name)) {
                at = i;
            }
        }
        if (at >= 0) {
            lines.set(at, line);
            if (at > 0 && lines.get(at - 1).startsWith("# pageio:set, ") || at > 0 && lines.get(at - 1).startsWith("# Web Console, ")) {
                lines.set(at - 1, note);
            } else {
                lines.add(at, note);
            }
        } else {
            lines.add(note);
            lines.add(line);
        }
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp"); // FileInstall only reads *.cfg
        Files.write(tmp, lines, StandardCharsets.UTF_8);
        try {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** {@code name = …} or {@code name: …} or {@code name …}, not commented out. */
    static boolean isActive(String line, String name) {
        String t = line.strip();
        return t.startsWith(name) && t.length() > name.length() && " \t=:".indexOf(t.charAt(name.length())) >= 0;
    }

    /** {@code #name = …} (the template's commented-out defaults). */
    static boolean isCommented(String line, String name) {
        String t = line.strip();
        if (!t.startsWith("#")) {
            return false;
        }
        return isActive(t.substring(1), name);
    }

    /** The file a first start writes: every setting commented out, with its default, range and how it applies. */
    static void writeTemplate(Path file, TextTable table) throws IOException {
        StringBuilder sb = new StringBuilder();
        sb.append("# pageio settings (like postgresql.conf): NAME = VALUE, PostgreSQL's names and units (128MB, 8kB, 60s, 100ms).\n");
        sb.append("# Read at start and watched while running (Apache Felix FileInstall, configuration ").append(PID).append(").\n");
        sb.append("# An invalid value is refused with a message (stderr and pageio:settings) and the old value stays in force.\n");
        sb.append("# pageio:set and the Web Console's pageio page save their changes here. Comment a line out to return to the default.\n");
        sb.append("#\n");
        List<String> header = table.header();
        int name = header.indexOf("name");
        int setting = header.indexOf("setting");
        int unit = header.indexOf("unit");
        int applies = header.indexOf("applies");
        int range = header.indexOf("range");
        for (Object[] row : table.rows()) {
            String u = TextTable.text(row[unit]);
            String left = "#" + TextTable.text(row[name]) + " = " + TextTable.text(row[setting]);
            sb.append(left).append(" ".repeat(Math.max(1, 40 - left.length())))
                    .append("# ").append(TextTable.text(row[range]))
                    .append(u.isEmpty() || TextTable.text(row[range]).contains(u) ? "" : " (" + u + ")")
                    .append("; ").append("live".equals(TextTable.text(row[applies])) ? "applies live"
                            : Setting.NEXT_START.equals(TextTable.text(row[applies])) ? "applies at the next start"
                            : "restarts the buffer manager")
                    .append('\n');
        }
        DataDirectory.createPrivate(file.getParent());
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.writeString(tmp, sb, StandardCharsets.UTF_8);
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file);
        }
    }
}
