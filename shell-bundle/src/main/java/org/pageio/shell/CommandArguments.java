package org.pageio.shell;

import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;

import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Converter;
import org.apache.felix.service.command.Descriptor;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.pageio.shell.command.Commands;

/**
 * Gogo's refusal of arguments that fit none of a command's methods, said in the command's own
 * terms. Gogo reports {@code pageio:stat_io --x} as {@code Cannot coerce stat_io(Token) to any of
 * [(boolean, String, String, String)]}: Java types, neither the option that did not fit nor the
 * options there are. This class reads the command's methods ({@code @Parameter} names are its
 * options and flags, the other parameters its arguments, named by the first words of their
 * {@code @Descriptor}) and says what went wrong:
 * <ul>
 *   <li>{@code unknown option --x; its options: -c/--context, -f/--format, …};</li>
 *   <li>{@code option --rows needs a value};</li>
 *   <li>{@code takes 2 arguments (setting, value), got 0};</li>
 *   <li>otherwise that an argument does not fit its type;</li>
 * </ul>
 * each followed by {@code ; help pageio:stat_io describes them}. {@code --help} or {@code -h}, when
 * the command has no such option, asks for that description instead ({@link #asksForHelp}).
 */
final class CommandArguments {

    private static final String GOGO_MISMATCH = "Cannot coerce ";

    private CommandArguments() {
    }

    /** Gogo's refusal of the arguments: no method of the command takes them. */
    static boolean isMismatch(Throwable t) {
        return t instanceof IllegalArgumentException && t.getMessage() != null
                && t.getMessage().startsWith(GOGO_MISMATCH);
    }

    /** The command line's words, quotes removed (Gogo's quoting, enough for a command's arguments). */
    static List<String> words(String commandLine) {
        List<String> words = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        char quote = 0;
        boolean inWord = false;
        for (int i = 0; i < commandLine.length(); i++) {
            char c = commandLine.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    w.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                inWord = true;
            } else if (Character.isWhitespace(c)) {
                if (inWord) {
                    words.add(w.toString());
                    w.setLength(0);
                    inWord = false;
                }
            } else {
                w.append(c);
                inWord = true;
            }
        }
        if (inWord) {
            words.add(w.toString());
        }
        return words;
    }

    /**
     * The public methods that implement {@code command} ({@code scope:function} or a bare
     * function): those named as the function on every service registered for it.
     */
    static List<Method> methods(BundleContext context, String command) {
        int colon = command.indexOf(':');
        String scope = colon < 0 ? "*" : command.substring(0, colon);
        String function = colon < 0 ? command : command.substring(colon + 1);
        if (function.isEmpty() || scope.isEmpty() || !function.matches("[A-Za-z0-9_-]+") || !scope.matches("[A-Za-z0-9_*-]+")) {
            return List.of();
        }
        String filter = "(&(" + Commands.SCOPE + "=" + scope + ")(" + Commands.FUNCTION + "=" + function + "))";
        List<Method> methods = new ArrayList<>();
        try {
            ServiceReference<?>[] refs = context.getServiceReferences((String) null, filter);
            for (ServiceReference<?> ref : refs == null ? new ServiceReference<?>[0] : refs) {
                Object service = context.getService(ref);
                if (service == null) {
                    continue;
                }
                try {
                    methods.addAll(methodsNamed(service.getClass(), function));
                } finally {
                    context.ungetService(ref);
                }
            }
        } catch (InvalidSyntaxException e) {
            return List.of();
        }
        return methods;
    }

    /** {@code type}'s public methods called {@code function}, as Gogo finds a command's. */
    static List<Method> methodsNamed(Class<?> type, String function) {
        List<Method> methods = new ArrayList<>();
        for (Method m : type.getMethods()) {
            if (m.getName().equals(function)) {
                methods.add(m);
            }
        }
        return methods;
    }

    /**
     * What to say about a line Gogo refused for its arguments.
     *
     * @param name  the command as typed ({@code pageio:drill})
     * @param known whether the command's methods were found (nothing is said otherwise in the shell)
     * @param help  whether {@code text} is Gogo's description of the command, asked for with {@code --help}
     * @param text  that description (null when {@code help} printed it itself), or what did not fit ({@link #explain})
     */
    record Reply(String name, boolean known, boolean help, String text) {
    }

    /**
     * The reply to {@code line}, which Gogo refused for its arguments: Gogo's {@code help} for the
     * command when the line asks for it ({@link #asksForHelp}) and the session has a help command,
     * else what did not fit.
     *
     * @param methods a command's methods by its name as typed
     */
    static Reply reply(CommandSession session, String line, Function<String, List<Method>> methods) {
        List<String> words = words(line);
        String name = words.get(0);
        List<String> args = words.subList(1, words.size());
        List<Method> forms = methods.apply(name);
        if (!forms.isEmpty() && asksForHelp(args, forms)) {
            try {
                Object help = session.execute("help " + name);
                return new Reply(name, true, true, help == null ? null : String.valueOf(session.format(help, Converter.INSPECT)));
            } catch (Exception e) {
                // no help command: say what did not fit instead
            }
        }
        return new Reply(name, !forms.isEmpty(), false, explain(name, args, forms));
    }

    /**
     * True when the arguments hold {@code --help} or {@code -h} and none of the methods declares
     * it: the person asked what the command takes.
     */
    static boolean asksForHelp(List<String> args, List<Method> methods) {
        Map<String, Boolean> options = options(methods);
        for (String a : args) {
            if ((a.equals("--help") || a.equals("-h")) && !options.containsKey(a)) {
                return true;
            }
        }
        return false;
    }

    /**
     * What about {@code args} fits none of {@code methods} (the methods of {@code command}), as
     * one line: the first unknown option, an option without its value, the wrong number of
     * arguments, or else an argument of the wrong type; with the command's options and where to
     * read about them.
     */
    static String explain(String command, List<String> args, List<Method> methods) {
        String help = "; help " + command + " describes them";
        if (methods.isEmpty()) {
            return "these arguments fit none of its forms: " + String.join(" ", args);
        }
        Map<String, Boolean> options = options(methods);
        int positional = 0;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (!isOptionLike(a)) {
                positional++;
                continue;
            }
            Boolean takesValue = options.get(a);
            if (takesValue == null) {
                return "unknown option " + a + "; " + optionList(methods) + help;
            }
            if (takesValue) {
                if (i + 1 >= args.size()) {
                    return "option " + a + " needs a value" + help;
                }
                i++;
            }
        }
        boolean countFits = false;
        for (Method m : methods) {
            int n = arguments(m).size();
            countFits |= n == positional || (takesAnyMore(m) && positional >= n - 1);
        }
        if (!countFits) {
            StringBuilder s = new StringBuilder("takes ");
            List<String> forms = new ArrayList<>();
            List<Method> byCount = new ArrayList<>(methods);
            byCount.sort(Comparator.comparingInt(m -> arguments(m).size()));
            for (Method m : byCount) {
                List<String> names = arguments(m);
                int least = takesAnyMore(m) ? names.size() - 1 : names.size();
                String form = least + (takesAnyMore(m) ? " or more" : "") + (least == 1 && !takesAnyMore(m)
                        ? " argument" : " arguments");
                if (!names.isEmpty()) {
                    form += " (" + String.join(", ", names) + ")";
                }
                if (!forms.contains(form)) {
                    forms.add(form);
                }
            }
            s.append(String.join(" or ", forms)).append(", got ").append(positional);
            return s + help;
        }
        return "an argument does not fit the type its option or position takes: "
                + String.join(" ", args) + help;
    }

    private static boolean isOptionLike(String a) {
        return a.length() > 1 && a.charAt(0) == '-' && !Character.isDigit(a.charAt(1)) && a.charAt(1) != '.';
    }

    /** One {@code @Parameter} of a command: its names, and whether it is a flag (takes no value). */
    private record Declared(String[] names, boolean flag) {
    }

    /** The options and flags the methods declare, in declaration order. */
    private static List<Declared> declared(List<Method> methods) {
        List<Declared> declared = new ArrayList<>();
        for (Method m : methods) {
            for (Parameter p : m.getParameters()) {
                org.apache.felix.service.command.Parameter o = p.getAnnotation(org.apache.felix.service.command.Parameter.class);
                if (o != null) {
                    declared.add(new Declared(o.names(),
                            !org.apache.felix.service.command.Parameter.UNSPECIFIED.equals(o.presentValue())));
                }
            }
        }
        return declared;
    }

    /** Every option and flag name of the methods: true when it takes a value. */
    private static Map<String, Boolean> options(List<Method> methods) {
        Map<String, Boolean> options = new LinkedHashMap<>();
        for (Declared d : declared(methods)) {
            for (String n : d.names()) {
                options.put(n, !d.flag());
            }
        }
        return options;
    }

    /** {@code its options: -c/--context, …; flags: --no-fio}, or that it has none. */
    private static String optionList(List<Method> methods) {
        TreeSet<String> valued = new TreeSet<>(CommandArguments::byLongName);
        TreeSet<String> flags = new TreeSet<>(CommandArguments::byLongName);
        for (Declared d : declared(methods)) {
            (d.flag() ? flags : valued).add(String.join("/", d.names()));
        }
        if (valued.isEmpty() && flags.isEmpty()) {
            return "it takes no options";
        }
        StringBuilder s = new StringBuilder();
        if (!valued.isEmpty()) {
            s.append("its options: ").append(String.join(", ", valued));
        }
        if (!flags.isEmpty()) {
            s.append(s.isEmpty() ? "its flags: " : "; flags: ").append(String.join(", ", flags));
        }
        return s.toString();
    }

    private static int byLongName(String a, String b) {
        return longName(a).compareTo(longName(b));
    }

    private static String longName(String names) {
        String[] parts = names.split("/");
        return parts[parts.length - 1].replaceFirst("^-+", "");
    }

    /** The method's arguments (parameters that are neither options nor the session), named. */
    private static List<String> arguments(Method m) {
        List<String> names = new ArrayList<>();
        for (Parameter p : m.getParameters()) {
            if (p.isAnnotationPresent(org.apache.felix.service.command.Parameter.class)
                    || CommandSession.class.isAssignableFrom(p.getType())) {
                continue;
            }
            Descriptor d = p.getAnnotation(Descriptor.class);
            names.add(d == null ? p.getName() : shortName(d.value()));
        }
        return names;
    }

    /** Whether the method's last argument takes the rest of the line (an array or a list). */
    private static boolean takesAnyMore(Method m) {
        Class<?>[] types = m.getParameterTypes();
        return types.length > 0 && (types[types.length - 1].isArray() || List.class.isAssignableFrom(types[types.length - 1]));
    }

    /** A descriptor's first words: up to its first comma, parenthesis or colon. */
    static String shortName(String descriptor) {
        String s = descriptor.strip();
        int end = s.length();
        for (char c : new char[] {',', '(', ':', ';'}) {
            int i = s.indexOf(c);
            if (i > 0) {
                end = Math.min(end, i);
            }
        }
        String name = s.substring(0, end).strip();
        String[] words = name.split("\\s+");
        return words.length > 4 ? String.join(" ", Arrays.copyOf(words, 4)) : name;
    }
}
