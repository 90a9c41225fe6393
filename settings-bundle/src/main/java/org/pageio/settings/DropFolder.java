package org.pageio.settings;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.felix.fileinstall.ArtifactInstaller;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceRegistration;
import org.osgi.framework.startlevel.BundleStartLevel;
import org.osgi.framework.startlevel.FrameworkStartLevel;
import org.osgi.framework.wiring.FrameworkWiring;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.cm.ManagedServiceFactory;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;

/**
 * The drop folder {@code <pageio.data>/load}: every bundle (jar file) in it is installed and
 * started when the container starts and while it runs; a jar replaced is updated, a jar removed is
 * uninstalled. Apache Felix FileInstall watches the folder (a watcher of its own, made through a
 * factory configuration of FileInstall's PID {@value #FILEINSTALL_PID}, beside the one watching
 * {@code conf/}); this component is the {@link ArtifactInstaller} FileInstall hands the folder's
 * jars to, so that every outcome is one line on stderr ({@code pageio: <jar>: ...}) and a jar
 * that is not a bundle, or a bundle that cannot start, is reported once instead of as a stack trace
 * at every scan.
 *
 * <p>Rules: the folder is created {@code rwx------} like every directory in the data directory.
 * A dropped bundle gets at most the framework's active start level and is started transiently (the framework storage is new at every start, so the
 * folder, not the framework, says what runs), so a bundle that cannot start does not hold up the
 * exec runner's wait for the persistently started ones. A bundle that failed to start is tried
 * again whenever the folder changes (a bundle it needs may just have been dropped in).
 * FileInstall calls {@link #install}, {@link #update} and {@link #uninstall} from one watcher
 * thread at a time (the initial scan from ConfigAdmin's delivery thread); they never throw.
 */
@Component(immediate = true, service = {})
public final class DropFolder implements ArtifactInstaller {

    /** The folder's name in the data directory, as Felix users know it (FileInstall's default folder). */
    public static final String NAME = "load";
    /** FileInstall's ManagedServiceFactory PID: each factory configuration is one more watched folder. */
    static final String FILEINSTALL_PID = "org.apache.felix.fileinstall";
    /** The name of the drop folder's factory configuration. */
    static final String CONFIGURATION_NAME = "pageio.load";

    /** Counted down once FileInstall handed over every jar that was in the folder at activation. */
    private static volatile CountDownLatch initialPass = new CountDownLatch(0);

    private final BundleContext context;
    private final Path folder;
    private final Set<Path> initialJars = ConcurrentHashMap.newKeySet();
    /** Bundles of the folder that did not start, tried again when the folder changes. */
    private final Set<Long> notStarted = ConcurrentHashMap.newKeySet();
    private final ServiceRegistration<ArtifactInstaller> registration;
    private final Configuration watcher;

    /**
     * Creates the folder, registers this installer with FileInstall, then adds the watcher; the
     * reference to FileInstall's factory makes the component wait for (and need) FileInstall.
     */
    @Activate
    public DropFolder(BundleContext context, @Reference ConfigurationAdmin configAdmin,
            @Reference(target = "(" + Constants.SERVICE_PID + "=" + FILEINSTALL_PID + ")") ManagedServiceFactory fileInstall)
            throws IOException {
        this.context = context;
        Path dir = DataDirectory.of(context).resolve(NAME);
        try {
            DataDirectory.createPrivate(dir);
        } catch (IOException e) {
            throw new IOException("cannot create the drop folder " + dir + ": " + e.getMessage(), e);
        }
        this.folder = dir.toRealPath();
        initialJars.addAll(jars(folder));
        initialPass = new CountDownLatch(initialJars.isEmpty() ? 0 : 1);
        // the installer first: FileInstall's initial scan must find it, or its own installer takes the jars
        this.registration = context.registerService(ArtifactInstaller.class, this, null);
        this.watcher = configAdmin.getFactoryConfiguration(FILEINSTALL_PID, CONFIGURATION_NAME, "?");
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("felix.fileinstall.dir", folder.toString());
        props.put("felix.fileinstall.filter", ".*\\.jar");
        props.put("felix.fileinstall.subdir.mode", "skip");
        String poll = context.getProperty("felix.fileinstall.poll");
        props.put("felix.fileinstall.poll", poll == null ? "1000" : poll);
        props.put("felix.fileinstall.noInitialDelay", "true");
        props.put("felix.fileinstall.disableNio2", "true");
        watcher.updateIfDifferent(props);
    }

    @Deactivate
    void deactivate() {
        initialPass.countDown();
        try {
            watcher.delete(); // FileInstall closes the watcher; the bundles stay until the framework stops
        } catch (IOException | IllegalStateException e) {
            // ConfigAdmin is stopping with the framework
        }
        try {
            registration.unregister();
        } catch (IllegalStateException stopping) {
            // the framework is stopping
        }
    }

    /**
     * Waits at most {@code millis} until FileInstall has handed over every jar that was in the
     * folder when the container started (the exec runner waits for it). True when it has.
     */
    public static boolean awaitInitialPass(long millis) throws InterruptedException {
        return initialPass.await(millis, TimeUnit.MILLISECONDS);
    }

    /** The folder, as FileInstall sees it (symbolic links resolved). */
    Path folder() {
        return folder;
    }

    @Override
    public boolean canHandle(File artifact) {
        return artifact.getName().endsWith(".jar") && artifact.getParentFile() != null
                && folder.equals(artifact.getParentFile().toPath().toAbsolutePath().normalize());
    }

    @Override
    public void install(File artifact) {
        installOrUpdate(artifact.toPath());
    }

    @Override
    public void update(File artifact) {
        installOrUpdate(artifact.toPath()); // a file refused before is installed now if it is a bundle
    }

    /** Installs {@code jar}, or updates the bundle installed from it, then starts it; says what happened. */
    private void installOrUpdate(Path jar) {
        Bundle b = bundleAt(jar);
        String done = b == null ? "installed" : "updated";
        try {
            String problem = BundleJar.problem(jar);
            if (problem != null) {
                report(jar, "not " + done + (b == null ? "" : " (" + describe(b) + " stays)") + ": " + problem);
                return;
            }
            try (InputStream in = Files.newInputStream(jar)) {
                if (b == null) {
                    b = context.installBundle(location(jar), in);
                } else {
                    b.update(in);
                }
            }
            if (done.equals("updated")) {
                refresh(b);
            }
            start(jar, b, done);
        } catch (BundleException | IOException | RuntimeException e) {
            report(jar, "not " + done + ": " + Container.message(e));
        } finally {
            handedOver(jar);
        }
    }

    @Override
    public void uninstall(File artifact) {
        Path jar = artifact.toPath();
        Bundle b = bundleAt(jar);
        if (b == null) {
            return; // it was never installed
        }
        String what = describe(b);
        try {
            notStarted.remove(b.getBundleId());
            b.uninstall();
            refresh(b);
            report(jar, "removed: " + what + " uninstalled");
        } catch (BundleException | RuntimeException e) {
            report(jar, "removed, but " + what + " could not be uninstalled: " + Container.message(e));
        }
        retryNotStarted();
    }

    /**
     * Starts {@code b} transiently and says so; a bundle that does not start is kept for another try.
     * Its start level is lowered to the framework's active one when above it (a bundle installed at
     * run time gets the launcher's initial level, above the levels still being climbed at start).
     */
    private void start(Path jar, Bundle b, String done) {
        try {
            BundleStartLevel level = b.adapt(BundleStartLevel.class);
            int active = context.getBundle(Constants.SYSTEM_BUNDLE_LOCATION).adapt(FrameworkStartLevel.class).getStartLevel();
            if (level != null && level.getStartLevel() > active) {
                level.setStartLevel(active);
            }
            b.start(Bundle.START_TRANSIENT | Bundle.START_ACTIVATION_POLICY);
            notStarted.remove(b.getBundleId());
            report(jar, done + " and started " + describe(b));
        } catch (BundleException | RuntimeException e) {
            notStarted.add(b.getBundleId());
            report(jar, done + " " + describe(b) + " but it did not start: " + Container.message(e));
        }
        retryNotStarted();
    }

    /** Tries again to start the folder's bundles that did not start; reports only those that start now. */
    private void retryNotStarted() {
        for (Long id : List.copyOf(notStarted)) {
            Bundle b = context.getBundle(id);
            if (b == null || b.getState() == Bundle.UNINSTALLED) {
                notStarted.remove(id);
                continue;
            }
            try {
                b.start(Bundle.START_TRANSIENT | Bundle.START_ACTIVATION_POLICY);
                notStarted.remove(id);
                System.err.println("pageio: " + NAME + ": started " + describe(b) + " now");
            } catch (BundleException | RuntimeException stillNot) {
                // reported when it was installed; the next change of the folder tries again
            }
        }
    }

    /** Refreshes the wiring after an update or uninstall, and waits for it (at most 30 s). */
    private void refresh(Bundle b) {
        CountDownLatch done = new CountDownLatch(1);
        FrameworkWiring wiring = context.getBundle(Constants.SYSTEM_BUNDLE_LOCATION).adapt(FrameworkWiring.class);
        wiring.refreshBundles(List.of(b), e -> done.countDown());
        try {
            done.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void handedOver(Path jar) {
        if (initialJars.remove(jar.toAbsolutePath().normalize()) && initialJars.isEmpty()) {
            initialPass.countDown();
        }
    }

    /** The bundle installed from {@code jar}, or null. */
    private Bundle bundleAt(Path jar) {
        String location = location(jar);
        for (Bundle b : context.getBundles()) {
            if (location.equals(b.getLocation())) {
                return b;
            }
        }
        return null;
    }

    /** A dropped bundle's location: the file's URI, as FileInstall writes it (it finds its bundles again by it). */
    static String location(Path jar) {
        return jar.toAbsolutePath().toUri().normalize().toString();
    }

    private static String describe(Bundle b) {
        return b.getSymbolicName() + " " + b.getVersion() + " [" + b.getBundleId() + "]";
    }

    private static void report(Path jar, String message) {
        System.err.println("pageio: " + jar.toAbsolutePath() + ": " + message);
    }

    /** The jar files directly in {@code dir}, as absolute normalized paths. */
    static List<Path> jars(Path dir) throws IOException {
        List<Path> jars = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.filter(p -> p.getFileName().toString().endsWith(".jar") && Files.isRegularFile(p))
                    .forEach(p -> jars.add(p.toAbsolutePath().normalize()));
        }
        return jars;
    }
}
