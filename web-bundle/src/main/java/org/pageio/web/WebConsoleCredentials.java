package org.pageio.web;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Dictionary;
import java.util.EnumSet;
import java.util.Hashtable;
import java.util.Set;
import java.util.function.Function;

import org.osgi.framework.BundleContext;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.settings.Container;
import org.pageio.settings.DataDirectory;

/**
 * Web Console credentials: the console never accepts {@code admin/admin}.
 *
 * <ol>
 *   <li>The framework property {@code felix.webconsole.password} is set, in {@code app/pageio.bndrun},
 *       to {@link WebConsolePassword#UNUSABLE}, so from the moment the console starts until this
 *       component has configured it, no password works.</li>
 *   <li>On activation this component reads {@code <pageio.data>/webconsole.password}; when the file
 *       does not exist it creates it (owner read/write only) with a fresh random password.</li>
 *   <li>It writes {@code username=admin} and the salted SHA-256 hash of that password to the
 *       console's ConfigAdmin configuration ({@value #PID}); the plain password lives only in the
 *       file. The file is the source of truth: edit it and restart to change the password.</li>
 * </ol>
 */
@Component(immediate = true, service = {})
public final class WebConsoleCredentials {

    /** The Web Console's configuration PID (its OsgiManager). */
    public static final String PID = "org.apache.felix.webconsole.internal.servlet.OsgiManager";
    /** The password file in the data directory. */
    public static final String FILE_NAME = "webconsole.password";
    public static final String USERNAME = "admin";

    static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    private final ConfigurationAdmin configAdmin;

    @Activate
    public WebConsoleCredentials(@Reference ConfigurationAdmin configAdmin, BundleContext context) {
        this.configAdmin = configAdmin;
        try {
            configure(context);
        } catch (IOException | RuntimeException e) {
            // The console keeps the unusable default password: locked, never open.
            System.err.println("pageio: Web Console stays locked, its credentials could not be set up: " + e);
        }
    }

    private void configure(BundleContext context) throws IOException {
        SecureRandom random = new SecureRandom();
        Path file = DataDirectory.of(context).resolve(FILE_NAME);
        boolean created = false;
        String password = read(file);
        if (password == null) {
            created = createFile(file, WebConsolePassword.generate(random));
            password = read(file);
            if (password == null) {
                throw new IOException(file + " is empty");
            }
        }

        Configuration cfg = configAdmin.getConfiguration(PID, "?");
        Dictionary<String, Object> props = cfg.getProperties();
        if (props == null || !USERNAME.equals(props.get("username"))
                || !WebConsolePassword.matches(props.get("password"), password)) {
            Dictionary<String, Object> update = new Hashtable<>();
            if (props != null) {
                for (var keys = props.keys(); keys.hasMoreElements(); ) {
                    String k = keys.nextElement();
                    update.put(k, props.get(k));
                }
            }
            update.put("username", USERNAME);
            update.put("password", WebConsolePassword.hash(password, random));
            cfg.update(update);
        }

        String line = announcement(context::getProperty, created, file);
        if (line == null) {
            return;
        }
        if (context.getProperty(Container.EXEC_PROPERTY) == null) {
            System.out.println(line);
        } else {
            PrintStream err = System.err; // exec output is for the commands
            err.println(line);
        }
    }

    /** Felix HTTP's framework property: {@code false} serves no HTTP at all ({@code ./pageio exec} without {@code --port}). */
    static final String HTTP_ENABLE = "org.apache.felix.http.enable";

    /**
     * What the start says about the console, or null for nothing: the URL, user and password file
     * when HTTP is served (under the exec runner only when the password was just created); without
     * HTTP no URL, since nothing answers there, only where a new password went.
     */
    static String announcement(Function<String, String> property, boolean created, Path file) {
        String enable = property.apply(HTTP_ENABLE);
        if (enable != null && enable.strip().equalsIgnoreCase("false")) {
            return created ? "pageio: Web Console password for user " + USERNAME + " created in " + file
                    + " (this run serves no HTTP)" : null;
        }
        if (property.apply(Container.EXEC_PROPERTY) != null && !created) {
            return null;
        }
        return "pageio: Web Console at " + url(property) + " — user " + USERNAME + ", password in " + file;
    }

    static String url(Function<String, String> property) {
        String host = property.apply("org.apache.felix.http.host");
        if (host == null || host.isBlank() || host.equals("0.0.0.0")) {
            host = "127.0.0.1";
        }
        String port = property.apply("org.osgi.service.http.port");
        if (port == null || port.isBlank()) {
            port = "8080";
        }
        return "http://" + host + ":" + port.trim() + "/system/console";
    }

    /** The first line of the file, or null when the file is missing or blank; tightens loose permissions. */
    static String read(Path file) throws IOException {
        if (!Files.exists(file)) {
            return null;
        }
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
        if (!OWNER_ONLY.containsAll(perms)) {
            Files.setPosixFilePermissions(file, EnumSet.copyOf(OWNER_ONLY));
            System.err.println("pageio: " + file + " was readable by others (" + PosixFilePermissions.toString(perms)
                    + "); set to rw-------");
        }
        String content = Files.readString(file, StandardCharsets.UTF_8).strip();
        int nl = content.indexOf('\n');
        String first = (nl < 0 ? content : content.substring(0, nl)).strip();
        return first.isEmpty() ? null : first;
    }

    /**
     * Writes {@code password} to {@code file}, created rw------- from the start (never wider, so
     * never readable by others even for a moment). Another process may win the race: then its file
     * stands and this returns false.
     */
    static boolean createFile(Path file, String password) throws IOException {
        Path tmp = Files.createTempFile(file.getParent(), "." + FILE_NAME + ".",
                ".tmp", PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        try {
            try (SeekableByteChannel ch = Files.newByteChannel(tmp, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(ByteBuffer.wrap((password + "\n").getBytes(StandardCharsets.UTF_8)));
            }
            Files.setPosixFilePermissions(tmp, EnumSet.copyOf(OWNER_ONLY));
            try {
                Files.createLink(file, tmp); // atomic, fails if the file exists
                return true;
            } catch (FileAlreadyExistsException e) {
                return false;
            } catch (UnsupportedOperationException | IOException e) {
                if (Files.exists(file)) {
                    return false;
                }
                Files.move(tmp, file);
                return true;
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
