package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.BeforeClass;
import org.junit.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * The path of a method bundle's author, against released artifacts and not the reactor (README.md,
 * "Writing an I/O method"): a copy of this checkout is built at the release version the way
 * {@code ./pageio install} builds it ({@code -pl tck -am -Drevision=<pageio.release>}), and what
 * install would put into the local repository is laid out in a throwaway file repository under
 * {@code target/}. Then a copy of {@code examples/ratelimit-method} (its own pom, no parent) is
 * built with {@code mvn verify} against {@code org.pageio:pageio-api} and
 * {@code org.pageio:pageio-tck} from that repository: its {@code RateLimitConformanceIT}, which
 * extends the kit, must run every test of the kit and pass. Last, pageio-api is baselined against
 * that release: unchanged it passes, with a public method removed bnd's baseline fails the build.
 *
 * <p>Offline and leaving {@code ~/.m2} as it was: the release build only reads it ({@code -o}, no
 * install); the other builds use a local repository of their own under {@code target/}, in which
 * every network repository is mirrored by {@code ~/.m2} read as a file repository. So it needs
 * only what this build already put into {@code ~/.m2}.
 */
public class ReleasedArtifactsIT {

    private static final long BUILD_MINUTES = 10;

    private static Path root;
    private static Path work;
    private static Path source;
    private static Path releaseRepo;
    private static Path localRepo;
    private static Path settings;
    private static Path m2;
    private static String release;

    @BeforeClass
    public static void buildAndLayOutTheRelease() throws Exception {
        root = Path.of(System.getProperty("user.dir")).getParent(); // failsafe runs in itest/
        release = System.getProperty("pageio.release");
        assertTrue("pageio.release is set by itest/pom.xml: " + release, release != null && release.matches("\\d+\\.\\d+\\.\\d+"));
        m2 = Path.of(System.getProperty("pageio.m2.repository"));
        assertTrue("the local repository this build used: " + m2, Files.isDirectory(m2));
        work = root.resolve("itest/target/released-artifacts");
        delete(work);
        source = work.resolve("pageio");
        copyTree(root, source);
        releaseRepo = Files.createDirectories(work.resolve("release-repository"));
        localRepo = Files.createDirectories(work.resolve("local-repository"));
        settings = work.resolve("settings.xml");
        Files.writeString(settings, """
                <settings>
                  <localRepository>%s</localRepository>
                  <mirrors>
                    <!-- every network repository is read from the local repository this build filled -->
                    <mirror><id>this-build</id><mirrorOf>external:*</mirrorOf><url>%s</url></mirror>
                  </mirrors>
                  <profiles>
                    <profile>
                      <id>pageio-release</id>
                      <repositories>
                        <repository><id>pageio-release</id><url>%s</url><snapshots><enabled>false</enabled></snapshots></repository>
                      </repositories>
                    </profile>
                  </profiles>
                  <activeProfiles><activeProfile>pageio-release</activeProfile></activeProfiles>
                </settings>
                """.formatted(localRepo, m2.toUri(), releaseRepo.toUri()));

        mvn(source, work.resolve("release-build.log"), 0, "-o", "package", "-pl", "tck", "-am", "-Drevision=" + release,
                "-Dmaven.test.skip=true", "-Dbnd.baseline.skip=true");
        layOut(source, releaseRepo);
    }

    @Test
    public void aReleaseHoldsTheApiTheKitAndTheKitsBundlesWithTheirVersionsWritten() throws Exception {
        for (String a : List.of("pageio", "pageio-api", "pageio-tck", "sync-bundle", "worker-bundle", "bufmgr-bundle",
                "heap-bundle", "table-bundle", "fault-bundle", "report-bundle", "settings-bundle", "shell-bundle")) {
            Path pom = releaseRepo.resolve("org/pageio/" + a + "/" + release + "/" + a + "-" + release + ".pom");
            assertTrue("the release has " + pom, Files.isRegularFile(pom));
            assertFalse(pom + " still says ${revision}: a consumer could not resolve it", Files.readString(pom).contains("${revision}"));
            if (!a.equals("pageio")) {
                assertTrue("the release has the jar of " + a, Files.isRegularFile(pom.resolveSibling(a + "-" + release + ".jar")));
            }
        }
    }

    @Test
    public void aMethodBundleBuiltAgainstTheReleasePassesTheKitInItsOwnBuild() throws Exception {
        Path example = work.resolve("ratelimit-method");
        copyTree(root.resolve("examples/ratelimit-method"), example);
        Path installed = m2.resolve("org/pageio/pageio-tck/" + release);
        boolean installedBefore = Files.exists(installed);

        Path log = work.resolve("ratelimit-method.log");
        mvn(example, log, 0, "-s", settings.toString(), "verify", "-Dpageio.version=" + release);

        Path report = example.resolve("target/failsafe-reports/TEST-org.example.pageio.ratelimit.RateLimitConformanceIT.xml");
        assertTrue("failsafe ran the example's conformance test: " + report, Files.isRegularFile(report));
        Element suite = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(report.toFile()).getDocumentElement();
        int tests = Integer.parseInt(suite.getAttribute("tests"));
        assertTrue("the kit's tests ran in the example's build: " + tests, tests >= 40);
        assertEquals("failures", "0", suite.getAttribute("failures"));
        assertEquals("errors", "0", suite.getAttribute("errors"));
        assertEquals("skipped", "0", suite.getAttribute("skipped"));

        // resolved from the release repository, not from the reactor or an earlier ./pageio install
        for (String a : List.of("pageio-api", "pageio-tck", "sync-bundle")) {
            Path origin = localRepo.resolve("org/pageio/" + a + "/" + release + "/_remote.repositories");
            assertTrue(a + " came from a repository: " + origin, Files.isRegularFile(origin));
            assertTrue(a + " came from the release repository: " + Files.readString(origin),
                    Files.readString(origin).contains(">pageio-release="));
        }
        assertEquals("~/.m2 is left as it was", installedBefore, Files.exists(installed));
    }

    @Test
    public void anIncompatibleApiChangeFailsTheBuildWithBndsBaselineMessage() throws Exception {
        Path unchanged = work.resolve("baseline-unchanged.log");
        mvn(source, unchanged, 0, "-s", settings.toString(), "verify", "-pl", "api-bundle", "-Dmaven.test.skip=true");
        String ok = Files.readString(unchanged);
        assertTrue("the API was baselined against release " + release + ": see " + unchanged,
                ok.contains("The baseline version was found to be " + release) && ok.contains("Baseline check succeeded"));

        Path context = source.resolve("api-bundle/src/main/java/org/pageio/api/AioContext.java");
        String java = Files.readString(context);
        Matcher m = Pattern.compile("\n    public long extraCompletions\\(\\) \\{\n.*?\n    }\n", Pattern.DOTALL).matcher(java);
        assertTrue("AioContext.extraCompletions() is there to remove", m.find());
        Files.writeString(context, m.replaceFirst("\n"));

        Path removed = work.resolve("baseline-removed-method.log");
        mvn(source, removed, 1, "-s", settings.toString(), "verify", "-pl", "api-bundle", "-Dmaven.test.skip=true");
        String failed = Files.readString(removed);
        assertTrue("bnd's baseline failed the build: see " + removed, failed.contains("Baseline problems detected"));
        assertTrue("bnd names the package, the major change and the version it needs: see " + removed,
                failed.lines().anyMatch(l -> l.contains("org.pageio.api") && l.contains("MAJOR") && l.contains("2.0.0")));
        assertTrue("bnd names the removed method: see " + removed, failed.contains("extraCompletions()"));
    }

    // ------------------------------------------------------------------ helpers

    /** Runs Maven in {@code dir} with this JVM's JDK; asserts exit 0 (or, for {@code expect} 1, a failure). */
    private static void mvn(Path dir, Path log, int expect, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("mvn", "-B", "-ntp"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process p = pb.start();
        if (!p.waitFor(BUILD_MINUTES, TimeUnit.MINUTES)) {
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            throw new AssertionError(String.join(" ", cmd) + " in " + dir + " still ran after " + BUILD_MINUTES + " min: " + log);
        }
        if (expect == 0) {
            assertEquals(String.join(" ", cmd) + " in " + dir + " failed: " + errors(log), 0, p.exitValue());
        } else {
            assertNotEquals(String.join(" ", cmd) + " in " + dir + " passed: " + log, 0, p.exitValue());
        }
    }

    private static String errors(Path log) throws IOException {
        return String.join("\n", Files.readAllLines(log).stream().filter(l -> l.startsWith("[ERROR]")).limit(30).toList())
                + "\n(log: " + log + ")";
    }

    /**
     * What {@code mvn install} puts into a repository, for every module the release build made:
     * the flattened pom (the version written out), the jar, and the artifact's metadata (what a
     * version range, the baseline's, is resolved from).
     */
    private static void layOut(Path built, Path repo) throws Exception {
        List<Path> poms;
        try (Stream<Path> s = Files.walk(built)) {
            poms = s.filter(p -> p.endsWith("target/.flattened-pom.xml")).toList();
        }
        Set<String> laid = new TreeSet<>();
        for (Path pom : poms) {
            Document d = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
            Element project = d.getDocumentElement();
            Element parent = element(project, "parent");
            String group = child(project, "groupId");
            if (group == null && parent != null) {
                group = child(parent, "groupId");
            }
            String artifact = child(project, "artifactId");
            String version = child(project, "version");
            if (version == null && parent != null) {
                version = child(parent, "version");
            }
            String packaging = child(project, "packaging");
            assertEquals("the release build made " + pom, release, version);
            Path dir = Files.createDirectories(repo.resolve(group.replace('.', '/')).resolve(artifact).resolve(version));
            Files.copy(pom, dir.resolve(artifact + "-" + version + ".pom"), StandardCopyOption.REPLACE_EXISTING);
            if (!"pom".equals(packaging)) {
                Path jar = pom.resolveSibling(artifact + "-" + version + ".jar");
                assertTrue("the release build packed " + jar, Files.isRegularFile(jar));
                Files.copy(jar, dir.resolve(jar.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
            Files.writeString(dir.getParent().resolve("maven-metadata.xml"), """
                    <metadata>
                      <groupId>%s</groupId>
                      <artifactId>%s</artifactId>
                      <versioning>
                        <latest>%s</latest>
                        <release>%s</release>
                        <versions><version>%s</version></versions>
                        <lastUpdated>20250101000000</lastUpdated>
                      </versioning>
                    </metadata>
                    """.formatted(group, artifact, version, version, version));
            laid.add(artifact);
        }
        assertTrue("the release build made pageio-api and pageio-tck: " + laid, laid.containsAll(List.of("pageio-api", "pageio-tck")));
    }

    /** The child element {@code name} of {@code e}, or null. */
    private static Element element(Element e, String name) {
        for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element c && c.getTagName().equals(name)) {
                return c;
            }
        }
        return null;
    }

    /** The text of the child element {@code name} of {@code e}, or null. */
    private static String child(Element e, String name) {
        Element c = element(e, name);
        return c == null ? null : c.getTextContent().strip();
    }

    /** Copies {@code from} to {@code to}, leaving out build output, data and version control. */
    private static void copyTree(Path from, Path to) throws IOException {
        Set<String> skip = Set.of("target", "data", "drill-results", ".git", ".idea");
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                if (!dir.equals(from) && skip.contains(dir.getFileName().toString())) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                Files.createDirectories(to.resolve(from.relativize(dir)));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                if (attrs.isRegularFile() && !file.getFileName().toString().equals(".git")) {
                    Files.copy(file, to.resolve(from.relativize(file)), StandardCopyOption.REPLACE_EXISTING);
                }
                return FileVisitResult.CONTINUE;
            }
        });
    }

    private static void delete(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
