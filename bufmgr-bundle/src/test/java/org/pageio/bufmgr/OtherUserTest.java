package org.pageio.bufmgr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.pageio.api.AioContext;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.method.sync.SyncIoMethod;

/**
 * Files owned by another user: the data directory is made by root, its files readable by all and
 * writable by root only, and a child JVM ({@link OtherUserChild}) runs over it as the unprivileged
 * user {@code nobody} (through {@code setpriv}). Reads go on, with every byte right; a change stays
 * in shared buffers while the checkpoint and an extension refuse, each naming the file, EACCES and
 * what to do; nothing stays pinned.
 */
class OtherUserTest {

    static final long REL = 76001;

    @Test
    void anotherUsersFilesAreReadAndNeverWrittenWithOneMessageNamingTheFileAndTheFix() throws Exception {
        Path root = Files.createTempDirectory("pageio-otheruser-");
        try {
            Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxr-xr-x"));
            Path data = root.resolve("data");
            BufMgrSettings settings = new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(4).build();
            try (BufferManagerCore core = BufferManagerCore.open(data, settings, new SyncIoMethod())) {
                SmgrRelation rel = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, REL));
                TestPages.fill(rel, 8);
            }
            try (Stream<Path> all = Files.walk(data)) {
                for (Path p : all.toList()) {
                    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "rwxr-xr-x" : "rw-r--r--"));
                }
            }
            String classpath = readableClasspath(root.resolve("classpath"));
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process child = new ProcessBuilder("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", java,
                    "--enable-native-access=ALL-UNNAMED", "-cp", classpath,
                    OtherUserChild.class.getName(), data.toString(), Long.toString(REL), "8")
                    .redirectErrorStream(true).start();
            String out = new String(child.getInputStream().readAllBytes());
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), out);
            assertEquals(0, child.exitValue(), "the child as nobody: " + out);
            System.out.println("OtherUserTest: the child as nobody printed:\n" + out);
            Path seg = data.resolve("base").resolve(Long.toString(REL));
            assertTrue(out.contains("READ 8 of 8"), "reads go on: " + out);
            assertTrue(out.contains("CHECKPOINT REFUSED: ") && out.contains("open for writing(" + seg + ") failed: EACCES")
                    && out.contains("make the data directory writable for this user"), out);
            assertTrue(out.contains("BLOCK 3 KEPT"), "the change stays in shared buffers: " + out);
            assertTrue(out.contains("EXTEND REFUSED: open for writing(" + seg + ") failed: EACCES"), out);
            assertTrue(out.contains("PINNED 0"), out);
            try (BufferManagerCore core = BufferManagerCore.open(data, settings, new SyncIoMethod());
                    BufferSession s = core.openSession("client")) {
                SmgrRelation rel = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, REL));
                assertEquals(8, rel.nblocks(), "nothing was written by the other user");
                int buf = s.readBuffer(rel, 3, null);
                assertEquals(null, TestPages.check(REL, 3, s.page(buf)), "the file still holds the original block 3");
                s.releaseBuffer(buf);
            }
            assertEquals(0, AioContext.hangWarnings());
        } finally {
            try (Stream<Path> all = Files.walk(root)) {
                all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /**
     * This JVM's class path, copied where {@code nobody} can read it (the build's own directories
     * may not be), as a class path string.
     */
    private static String readableClasspath(Path dir) throws IOException {
        Files.createDirectories(dir.resolve("dirs"));
        List<String> entries = new ArrayList<>(List.of(System.getProperty("java.class.path").split(File.pathSeparator)));
        List<String> copied = new ArrayList<>();
        int n = 0;
        for (String e : entries) {
            Path p = Path.of(e);
            if (Files.isDirectory(p)) {
                Path to = dir.resolve("dirs").resolve(Integer.toString(n++));
                copied.add(to.toString());
                try (Stream<Path> all = Files.walk(p)) {
                    for (Path f : all.toList()) {
                        Path t = to.resolve(p.relativize(f).toString());
                        if (Files.isDirectory(f)) {
                            Files.createDirectories(t);
                        } else {
                            Files.copy(f, t, StandardCopyOption.REPLACE_EXISTING);
                        }
                    }
                }
            } else if (Files.isRegularFile(p)) {
                Path to = dir.resolve(n++ + "-" + p.getFileName());
                Files.copy(p, to, StandardCopyOption.REPLACE_EXISTING);
                copied.add(to.toString());
            }
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.toList()) {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "rwxr-xr-x" : "rw-r--r--"));
            }
        }
        return String.join(File.pathSeparator, copied);
    }
}
