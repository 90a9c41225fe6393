package org.pageio.settings;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntPredicate;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.AttributeDefinition;
import org.osgi.service.metatype.MetaTypeInformation;
import org.osgi.service.metatype.MetaTypeService;
import org.osgi.service.metatype.ObjectClassDefinition;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.SharedMemory;
import org.pageio.report.TextTable;

/**
 * {@code pageio:settings} (PostgreSQL's {@code pg_settings} for our PIDs) and {@code pageio:set NAME
 * VALUE}. Definitions come from the Metatype OCDs of {@value Setting#BUFMGR_PID},
 * {@value Setting#WORKER_PID}, {@value Setting#URING_PID}, {@value Setting#POSIX_AIO_PID} and {@value Setting#TABLE_PID}, values from ConfigAdmin; {@code io_method} is derived from
 * {@code ioMethod.target}. A value set here is marked in the configuration's private property
 * {@value #CONSOLE_MARK} (not propagated to service properties), so its source shows as
 * {@code console}; any other stored value shows as {@code configuration file}.
 */
@Component(service = SettingsService.class)
public final class SettingsService {

    /** The properties last set through {@code pageio:set}, a String[] in each configuration. */
    public static final String CONSOLE_MARK = ".pageio.console";

    static final String[] HEADER = {"name", "setting", "unit", "source", "context", "applies", "range"};

    static final List<String> PIDS = List.of(Setting.BUFMGR_PID, Setting.WORKER_PID, Setting.URING_PID, Setting.POSIX_AIO_PID,
            Setting.TABLE_PID);

    private final BundleContext context;
    private final ConfigurationAdmin configAdmin;
    private final MetaTypeService metaType;
    private final Map<ServiceReference<IoMethod>, IoMethod> methods;

    @Activate
    public SettingsService(BundleContext context, @Reference ConfigurationAdmin configAdmin,
            @Reference MetaTypeService metaType, @Reference RegisteredMethods registered) {
        this.context = context;
        this.methods = registered.all();
        this.configAdmin = configAdmin;
        this.metaType = metaType;
    }

    /** The settings as {@code pageio:settings} and the Web Console page show them. */
    public TextTable table() throws IOException {
        return table(definitions(), this::stored);
    }

    private static final long RESTART_WAIT_SECONDS = 30;

    /**
     * Updates a configuration that restarts the buffer manager and waits until its service is
     * registered again, so that the next command (or the next line a person types) finds the new
     * setting in force, as PostgreSQL's SET is in force when it returns.
     */
    private boolean updateAndAwaitRestart(Configuration c, Dictionary<String, Object> props) throws IOException {
        java.util.concurrent.CountDownLatch registered = new java.util.concurrent.CountDownLatch(1);
        org.osgi.framework.ServiceListener listener = e -> {
            if (e.getType() == org.osgi.framework.ServiceEvent.REGISTERED) {
                registered.countDown();
            }
        };
        try {
            context.addServiceListener(listener, "(objectClass=org.pageio.bufmgr.BufferManager)");
        } catch (org.osgi.framework.InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
        try {
            c.update(props);
            return registered.await(RESTART_WAIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            context.removeServiceListener(listener);
        }
    }

    /**
     * {@code pageio:set} and the Web Console's form: validates (throwing an IllegalArgumentException
     * whose message names the setting, what is valid and the value that stays), applies the value
     * with source {@code console}, waits for the buffer manager when it restarts, and saves the value
     * in the settings file so that it survives a restart. Returns the one-line outcome.
     */
    public String setFrom(String who, String name, String value) throws IOException {
        Map<String, Defined> defs = definitions();
        Defined d = defs.get(name);
        if (d == null) {
            throw new IllegalArgumentException("unknown setting '" + name + "'; known: " + String.join(", ", defs.keySet()));
        }
        Setting s = d.setting();
        Dictionary<String, Object> current = stored(s.pid());
        Object old = valueOf(s, current);
        Object parsed = validate(d, value, current, defs);
        if (s.kind() == Setting.Kind.METHOD) { // hot swap: waits for it, or refuses keeping the old method
            org.pageio.bufmgr.MethodStatus st = MethodSwitch.switchTo(context, configAdmin, Setting.methodOf((String) parsed));
            return "SET " + name + " = " + s.show(parsed) + " (was " + s.show(old) + "): " + Setting.METHOD_TARGET + "="
                    + parsed + " on " + s.pid() + "; swapped live: " + st.lastSwap() + save(who, name, value);
        }
        Configuration c = configAdmin.getConfiguration(s.pid(), "?");
        Dictionary<String, Object> props = c.getProperties();
        if (props == null) {
            props = new Hashtable<>();
        }
        props.put(s.property(), parsed);
        Set<String> marked = new LinkedHashSet<>(Arrays.asList(marks(props)));
        marked.add(s.property());
        props.put(CONSOLE_MARK, marked.toArray(String[]::new));
        boolean restarts = s.applies().equals("restart");
        boolean back = true;
        if (restarts) {
            back = updateAndAwaitRestart(c, props);
        } else {
            c.update(props);
        }
        StringBuilder out = new StringBuilder("SET ").append(name).append(" = ").append(s.show(parsed));
        if (s.unit() != Setting.Unit.NONE) {
            out.append(' ').append(s.unit().label);
        }
        out.append(" (was ").append(s.show(old)).append(')');
        if (s.kind() == Setting.Kind.METHOD) {
            out.append(": ").append(Setting.METHOD_TARGET).append('=').append(parsed).append(" on ").append(s.pid());
        }
        String refused = restarts && back ? startRefusal() : null;
        out.append(s.applies().equals(Setting.NEXT_START) ? "; applies at the next start of pageio (glibc sizes its pool once"
                + " per process)" : !restarts ? "; applies live" : refused != null ? "; " + refused : back ? "; the buffer manager restarted"
                : "; the buffer manager did not come back within " + RESTART_WAIT_SECONDS + " s (see the log)");
        String note = note(s, parsed, current, defs);
        if (note != null) {
            out.append("; ").append(note);
        }
        return out.append(save(who, name, value)).toString();
    }

    /** Why the buffer manager registered after a restart does not serve (its start was refused), or null. */
    private String startRefusal() {
        ServiceReference<BufferManager> ref = context.getServiceReference(BufferManager.class);
        BufferManager b = ref == null ? null : context.getService(ref);
        try {
            return whyNotRunning(b);
        } finally {
            if (b != null) {
                context.ungetService(ref);
            }
        }
    }

    /** Null when {@code b} serves (or is null); else why not: its start was refused (shared_buffers, the data directory). */
    public static String whyNotRunning(BufferManager b) {
        if (b == null) {
            return null;
        }
        try {
            b.pool();
            return null;
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
    }

    /** Saves an applied value in the settings file; says where, or why not. */
    private String save(String who, String name, String value) {
        Path file = SettingsFile.path(context);
        try {
            SettingsFile.save(file, name, value.strip(), who);
            return "; saved in " + file;
        } catch (IOException | RuntimeException e) {
            return "; NOT saved in " + file + " (" + e.getMessage() + "): the value is lost at the next start";
        }
    }

    /** The value in force: the stored one, else the default. */
    private static Object valueOf(Setting s, Dictionary<String, Object> props) {
        Object v = props == null ? null : props.get(s.property());
        return v == null ? s.defaultValue() : v;
    }

    /**
     * Parses and checks {@code value} for {@code d} against the other values in {@code proposed};
     * the refusal says what stays.
     */
    private Object validate(Defined d, String value, Dictionary<String, Object> proposed, Map<String, Defined> defs) {
        Setting s = d.setting();
        try {
            Object parsed = s.parse(value, d.validator() == null ? null : v -> isValid(d.validator(), v));
            if (s.kind() == Setting.Kind.METHOD) {
                checkAvailable(Setting.methodOf((String) parsed));
            }
            checkMappable(s, parsed);
            crossCheck(s, parsed, proposed, defs);
            return parsed;
        } catch (IllegalArgumentException e) {
            // no cause: the exec runner and Gogo show the root cause's message, which must say what stays
            throw new IllegalArgumentException(e.getMessage() + "; " + s.name() + " stays " + s.show(valueOf(s, proposed)));
        }
    }

    // ------------------------------------------------------------------ the settings file

    /**
     * What the settings file last asked for: the file and the lines refused (empty when all were
     * taken), each {@code FILE:LINE: message}.
     */
    public record FileReport(String file, List<String> refused, long atMillis) {}

    private volatile FileReport fileReport;

    /** The last application of the settings file, or null when none was read yet. */
    public FileReport fileReport() {
        return fileReport;
    }

    /** Configuration keys in the settings file's configuration that are not settings. */
    private static boolean bookkeeping(String key) {
        return key.startsWith(".") || key.startsWith("service.") || key.startsWith("component.")
                || key.startsWith("felix.fileinstall.") || key.startsWith("osgi.ds.");
    }

    /**
     * Applies the settings file's values ({@code NAME = VALUE}, PostgreSQL names and units, as
     * FileInstall read them into the configuration {@value SettingsFile#PID}): every valid value
     * that differs from the one in force is stored in its PID's configuration (one update per PID,
     * so the buffer manager restarts at most once), values that were taken from the file and are no
     * longer in it return to their defaults (console values too: pageio:set saves them in the file),
     * and every invalid line is refused with a message naming the setting and what is valid, its
     * old value staying in force. A console value keeps its source while the file holds the same
     * value. Never waits (it runs
     * on ConfigAdmin's delivery thread). Returns the refusals, also kept for {@code pageio:settings},
     * each starting with {@code FILE:LINE: } ({@code lines}: the line setting each name, see
     * {@link SettingsFile#lineNumbers}; {@code FILE: } alone for a name not found there).
     */
    List<String> applyFile(Map<String, ?> file, String fileName, Map<String, Integer> lines,
            Map<Integer, String> syntaxErrors) throws IOException {
        java.util.function.Function<String, String> at = name -> {
            Integer line = lines.get(name);
            return fileName + (line == null ? "" : ":" + line) + ": ";
        };
        Map<String, Defined> defs = definitions();
        Map<String, Dictionary<String, Object>> current = new java.util.LinkedHashMap<>();
        Map<String, Dictionary<String, Object>> proposed = new java.util.LinkedHashMap<>();
        for (String pid : PIDS) {
            Dictionary<String, Object> c = stored(pid);
            current.put(pid, c == null ? new Hashtable<>() : c);
            proposed.put(pid, copy(c));
        }
        List<String> refused = new ArrayList<>();
        syntaxErrors.forEach((line, text) -> refused.add(SettingsFile.syntaxError(fileName, line, text)));
        Map<String, Object> accepted = new java.util.LinkedHashMap<>();
        Set<String> named = new java.util.HashSet<>();
        for (Map.Entry<String, ?> e : new TreeMap<>(file).entrySet()) {
            String name = e.getKey().strip();
            if (bookkeeping(name)) {
                continue;
            }
            named.add(name);
            if (lines.containsKey(name) && syntaxErrors.containsKey(lines.get(name))) {
                continue; // refused above as a line that is no setting; the old value stays
            }
            Defined d = defs.get(name);
            if (d == null) {
                refused.add(at.apply(name) + "unknown setting '" + name + "'; known: " + String.join(", ", defs.keySet()));
                continue;
            }
            Setting s = d.setting();
            try {
                Object parsed = s.parse(String.valueOf(e.getValue()), d.validator() == null ? null
                        : v -> isValid(d.validator(), v));
                if (s.kind() == Setting.Kind.METHOD) {
                    checkAvailable(Setting.methodOf((String) parsed));
                }
                checkMappable(s, parsed);
                accepted.put(name, parsed);
                proposed.get(s.pid()).put(s.property(), parsed);
            } catch (IllegalArgumentException x) {
                refused.add(at.apply(name) + x.getMessage() + "; " + name + " stays " + s.show(valueOf(s, current.get(s.pid()))));
            }
        }
        // across settings, with the file's other values in place (io_min_workers with io_max_workers)
        for (Map.Entry<String, Object> e : new ArrayList<>(accepted.entrySet())) {
            Setting s = defs.get(e.getKey()).setting();
            try {
                crossCheck(s, e.getValue(), proposed.get(s.pid()), defs);
            } catch (IllegalArgumentException x) {
                accepted.remove(e.getKey());
                restore(proposed.get(s.pid()), current.get(s.pid()), s.property());
                refused.add(at.apply(s.name()) + x.getMessage() + "; " + s.name() + " stays "
                        + s.show(valueOf(s, current.get(s.pid()))));
            }
        }
        for (Defined d : defs.values()) {
            Setting s = d.setting();
            Dictionary<String, Object> p = proposed.get(s.pid());
            Set<String> marks = new LinkedHashSet<>(Arrays.asList(marks(p)));
            Object now = current.get(s.pid()).get(s.property());
            if (accepted.containsKey(s.name())) {
                if (!java.util.Objects.equals(now, accepted.get(s.name()))) {
                    marks.remove(s.property()); // the file changed it: its source is the file now
                }
            } else if (!named.contains(s.name()) && now != null) {
                // no longer in the file (pageio:set saves there, so console values are in it too): the default
                p.remove(s.property());
                marks.remove(s.property());
            }
            if (marks.isEmpty()) {
                p.remove(CONSOLE_MARK);
            } else {
                p.put(CONSOLE_MARK, marks.toArray(String[]::new));
            }
        }
        for (String pid : PIDS) {
            if (!sameSettings(current.get(pid), proposed.get(pid))) {
                configAdmin.getConfiguration(pid, "?").update(proposed.get(pid));
            }
        }
        List<String> inOrder = inLineOrder(fileName, refused);
        fileReport = new FileReport(fileName, inOrder, System.currentTimeMillis());
        return inOrder;
    }

    /**
     * {@code refusals} ({@code FILE:LINE: message}) sorted by line, as a compiler lists its errors;
     * those naming no line ({@code FILE: message}) last, each group in the order given.
     */
    static List<String> inLineOrder(String fileName, List<String> refusals) {
        String prefix = fileName + ":";
        java.util.function.ToIntFunction<String> line = r -> {
            if (r.startsWith(prefix)) {
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("^(\\d+): ").matcher(r.substring(prefix.length()));
                if (m.find()) {
                    try {
                        return Integer.parseInt(m.group(1));
                    } catch (NumberFormatException tooLong) {
                        return Integer.MAX_VALUE;
                    }
                }
            }
            return Integer.MAX_VALUE;
        };
        return refusals.stream().sorted(java.util.Comparator.comparingInt(line)).toList();
    }

    private static Dictionary<String, Object> copy(Dictionary<String, Object> d) {
        Hashtable<String, Object> c = new Hashtable<>();
        if (d != null) {
            for (var keys = d.keys(); keys.hasMoreElements(); ) {
                String k = keys.nextElement();
                c.put(k, d.get(k));
            }
        }
        return c;
    }

    private static void restore(Dictionary<String, Object> proposed, Dictionary<String, Object> current, String key) {
        Object v = current.get(key);
        if (v == null) {
            proposed.remove(key);
        } else {
            proposed.put(key, v);
        }
    }

    /** Equal apart from ConfigAdmin's own keys (service.pid), comparing String[] by content. */
    static boolean sameSettings(Dictionary<String, Object> a, Dictionary<String, Object> b) {
        return canonical(a).equals(canonical(b));
    }

    private static Map<String, Object> canonical(Dictionary<String, Object> d) {
        Map<String, Object> m = new TreeMap<>();
        for (var keys = d.keys(); keys.hasMoreElements(); ) {
            String k = keys.nextElement();
            if (k.startsWith("service.")) {
                continue;
            }
            Object v = d.get(k);
            m.put(k, v instanceof String[] arr ? Arrays.asList(arr) : v);
        }
        return m;
    }

    // ------------------------------------------------------------------ the table

    /** A setting and, when Metatype gave one, the attribute that validates its values. */
    record Defined(Setting setting, AttributeDefinition validator) {}

    /** Looks up the stored configuration of a PID, or null. */
    interface Store {
        Dictionary<String, Object> stored(String pid) throws IOException;
    }

    /** The settings table: one row per setting, in definition order. */
    static TextTable table(Map<String, Defined> defs, Store store) throws IOException {
        TextTable t = new TextTable(HEADER);
        for (Defined d : defs.values()) {
            Setting s = d.setting();
            Dictionary<String, Object> props = store.stored(s.pid());
            Object v = props == null ? null : props.get(s.property());
            String source;
            if (v == null) {
                v = s.defaultValue();
                source = "default";
            } else {
                source = Arrays.asList(marks(props)).contains(s.property()) ? "console" : "configuration file";
            }
            t.row(s.name(), s.show(v), s.unit().label, source, s.context(), s.applies(), s.range());
        }
        return t;
    }

    static String[] marks(Dictionary<String, Object> props) {
        Object m = props.get(CONSOLE_MARK);
        if (m instanceof String[] a) {
            return a;
        }
        if (m instanceof String one) {
            return new String[] {one};
        }
        if (m instanceof java.util.Collection<?> col) {
            return col.stream().map(String::valueOf).toArray(String[]::new);
        }
        return new String[0];
    }

    private Dictionary<String, Object> stored(String pid) throws IOException {
        return stored(configAdmin, pid);
    }

    /**
     * The stored properties of configuration {@code pid} in {@code configAdmin}, or null when there
     * is none. Reads without creating it (unlike {@code getConfiguration}).
     */
    public static Dictionary<String, Object> stored(ConfigurationAdmin configAdmin, String pid) throws IOException {
        try {
            Configuration[] found = configAdmin.listConfigurations("(service.pid=" + pid + ")");
            return found == null || found.length == 0 ? null : found[0].getProperties();
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException("the filter for " + pid + " is invalid: " + e.getMessage(), e);
        }
    }

    /** The settings of every PID, by name: Metatype's attributes, with io_method in place of ioMethod.target. */
    Map<String, Defined> definitions() {
        Map<String, Defined> defs = new java.util.LinkedHashMap<>();
        for (String pid : PIDS) {
            ObjectClassDefinition ocd = ocd(pid);
            if (ocd == null) {
                continue;
            }
            AttributeDefinition[] ads = ocd.getAttributeDefinitions(ObjectClassDefinition.ALL);
            for (AttributeDefinition ad : ads == null ? new AttributeDefinition[0] : ads) {
                if (ad.getID().equals(Setting.METHOD_TARGET)) {
                    String[] dv = ad.getDefaultValue();
                    String def = dv == null || dv.length == 0 ? null : Setting.methodOf(dv[0]);
                    defs.put(Setting.IO_METHOD, new Defined(Setting.ioMethod(methodNames(), def), null));
                } else {
                    Setting s = fromMetatype(pid, ad);
                    defs.put(s.name(), new Defined(s, ad));
                }
            }
        }
        return defs;
    }

    private ObjectClassDefinition ocd(String pid) {
        for (Bundle b : context.getBundles()) {
            MetaTypeInformation mti = metaType.getMetaTypeInformation(b);
            if (mti != null && Arrays.asList(mti.getPids()).contains(pid)) {
                return mti.getObjectClassDefinition(pid, null);
            }
        }
        return null;
    }

    /** A Setting from a Metatype attribute; the range from {@code validate}, unit and context from the catalog. */
    static Setting fromMetatype(String pid, AttributeDefinition ad) {
        String name = ad.getID();
        Setting.Known k = Setting.known(name);
        String[] dv = ad.getDefaultValue();
        String def = dv == null || dv.length == 0 ? null : dv[0];
        String[] options = ad.getOptionValues();
        Setting.Kind kind;
        Object defaultValue;
        Long min = null;
        Long max = null;
        switch (ad.getType()) {
            case AttributeDefinition.INTEGER, AttributeDefinition.LONG, AttributeDefinition.SHORT, AttributeDefinition.BYTE -> {
                kind = Setting.Kind.INTEGER;
                defaultValue = def == null ? null : Integer.valueOf(def);
                int known = def == null ? 0 : Integer.parseInt(def);
                Long[] r = probeRange(v -> isValid(ad, Integer.toString(v)), known);
                min = r[0];
                max = r[1];
            }
            case AttributeDefinition.DOUBLE, AttributeDefinition.FLOAT -> {
                // the range probed at whole numbers through Metatype's validate (bounds such as 0..10)
                kind = Setting.Kind.REAL;
                defaultValue = def == null ? null : Double.valueOf(def);
                int known = def == null ? 0 : (int) Math.floor(Double.parseDouble(def));
                Long[] r = probeRange(v -> isValid(ad, Integer.toString(v)), known);
                min = r[0];
                max = r[1];
            }
            case AttributeDefinition.BOOLEAN -> {
                kind = Setting.Kind.BOOLEAN;
                defaultValue = def == null ? null : Boolean.valueOf(def);
            }
            default -> {
                kind = options != null && options.length > 0 ? Setting.Kind.ENUM : Setting.Kind.STRING;
                defaultValue = def;
            }
        }
        return new Setting(name, pid, name, kind, k.unit(), k.context(), Setting.appliesFor(pid, name), min, max,
                k.excludeZero(), options == null ? List.of() : List.of(options), defaultValue);
    }

    /** Metatype's {@code validate}: "" valid, null no validation, else the reason. */
    static boolean isValid(AttributeDefinition ad, String v) {
        String r = ad.validate(v);
        return r == null || r.isEmpty();
    }

    /**
     * The contiguous valid range around {@code known} (a valid value) that {@code valid} accepts,
     * found by bisection; null for an end that is the int type's end (no bound).
     */
    static Long[] probeRange(IntPredicate valid, int known) {
        if (!valid.test(known)) {
            return new Long[] {null, null};
        }
        Long min = null;
        if (!valid.test(Integer.MIN_VALUE)) {
            long lo = Integer.MIN_VALUE; // invalid
            long hi = known; // valid
            while (hi - lo > 1) {
                long mid = Math.floorDiv(lo + hi, 2);
                if (valid.test((int) mid)) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            min = hi;
        }
        Long max = null;
        if (!valid.test(Integer.MAX_VALUE)) {
            long lo = known; // valid
            long hi = Integer.MAX_VALUE; // invalid
            while (hi - lo > 1) {
                long mid = Math.floorDiv(lo + hi, 2);
                if (valid.test((int) mid)) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            max = lo;
        }
        return new Long[] {min, max};
    }

    // ------------------------------------------------------------------ checks across settings

    /** Refuses a value that the owning component would reject together with the others in force. */
    static void crossCheck(Setting s, Object parsed, Dictionary<String, Object> current, Map<String, Defined> defs) {
        switch (s.name()) {
            case "io_min_workers" -> {
                int max = intValue("io_max_workers", current, defs);
                if ((Integer) parsed > max) {
                    throw new IllegalArgumentException("io_min_workers = " + parsed + " is greater than io_max_workers = "
                            + max + "; valid: 1.." + max + " (or raise io_max_workers first)");
                }
            }
            case "io_max_workers" -> {
                int min = intValue("io_min_workers", current, defs);
                if ((Integer) parsed < min) {
                    throw new IllegalArgumentException("io_max_workers = " + parsed + " is less than io_min_workers = "
                            + min + "; valid: " + min + "..32 (or lower io_min_workers first)");
                }
            }
            default -> {
            }
        }
    }

    /**
     * Refuses a {@code shared_buffers} this machine cannot map now ({@link SharedMemory}: the pool is
     * faulted in at start, so it must fit in {@code MemAvailable}, and in the commit limit with
     * {@code vm.overcommit_memory = 2}; the pool in use counts as free, the restart unmaps it first).
     */
    static void checkMappable(Setting s, Object parsed) {
        if (s.name().equals("shared_buffers") && s.pid().equals(Setting.BUFMGR_PID) && parsed instanceof Integer blocks) {
            String refusal = SharedMemory.refusal(blocks, SharedMemory.limitAfterRestart());
            if (refusal != null) {
                throw new IllegalArgumentException(refusal);
            }
        }
    }

    /** A warning that does not refuse: io_combine_limit above io_max_combine_limit is capped. */
    static String note(Setting s, Object parsed, Dictionary<String, Object> current, Map<String, Defined> defs) {
        if (s.name().equals("io_combine_limit")) {
            int cap = intValue("io_max_combine_limit", current, defs);
            if ((Integer) parsed > cap) {
                return "capped at io_max_combine_limit = " + cap;
            }
        }
        return null;
    }

    private static int intValue(String name, Dictionary<String, Object> current, Map<String, Defined> defs) {
        Defined d = defs.get(name);
        Object v = current == null ? null : current.get(name);
        if (v == null && d != null) {
            v = d.setting().defaultValue();
        }
        return v instanceof Number n ? n.intValue() : Integer.parseInt(String.valueOf(v));
    }

    private List<String> methodNames() {
        TreeMap<String, Boolean> names = new TreeMap<>();
        for (ServiceReference<IoMethod> ref : methods.keySet()) {
            if (ref.getProperty(IoMethod.PROPERTY) instanceof String n && !n.isBlank()) {
                names.put(n, true);
            }
        }
        return new ArrayList<>(names.keySet());
    }

    private void checkAvailable(String name) {
        methods.forEach((ref, m) -> {
            if (name.equals(ref.getProperty(IoMethod.PROPERTY))) {
                IoMethod.Availability a;
                try {
                    a = m.availability();
                } catch (RuntimeException | LinkageError e) {
                    throw new IllegalArgumentException("io_method " + name + " cannot run here: " + e);
                }
                if (a == null || !a.available()) {
                    throw new IllegalArgumentException("io_method " + name + " cannot run here: "
                            + (a == null ? "no availability" : a.cause()) + "; available: " + available());
                }
            }
        });
    }

    private String available() {
        List<String> ok = new ArrayList<>();
        methods.forEach((ref, m) -> {
            try {
                IoMethod.Availability a = m.availability();
                if (a != null && a.available()) {
                    ok.add(String.valueOf(ref.getProperty(IoMethod.PROPERTY)));
                }
            } catch (RuntimeException | LinkageError e) {
                // not available
            }
        });
        ok.sort(null);
        return String.join(", ", ok);
    }
}
