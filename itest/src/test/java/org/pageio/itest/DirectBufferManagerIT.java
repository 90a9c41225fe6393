package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.composite;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.concurrent.ThreadLocalRandom;
import javax.inject.Inject;
import org.junit.After;
import org.junit.Test;
import org.ops4j.pax.exam.Option;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.itest.kit.NumberedRelation;
import org.pageio.posix.OpenFlags;

/**
 * With {@code io_method=direct} the buffer manager service opens relation files with
 * O_DIRECT (the method says it bypasses the page cache) and streams real pages through them.
 */
public class DirectBufferManagerIT extends PageioTestBase {

    @Inject
    private ConfigurationAdmin configAdmin;

    @Inject
    private BundleContext context;

    @Override
    protected Option extraOptions() {
        return composite(reactorBundle("uring-bundle"), reactorBundle("directio-bundle"));
    }

    /**
     * Deletes the configuration and waits until the buffer manager runs on the defaults again:
     * a configuration created again while SCR still handles the deletion can go unnoticed (seen
     * once in a full run: the next test's update never reached the component).
     */
    @After
    public void deleteConfiguration() throws Exception {
        Configuration[] cs = configAdmin.listConfigurations("(service.pid=org.pageio.bufmgr)");
        if (cs != null) {
            for (Configuration c : cs) {
                c.delete();
            }
        }
        await("the buffer manager back on the defaults", () -> {
            BufferManager b = current();
            return b != null && b.pool().method().name().equals("worker") && b.pool().settings().registeredBuffers()
                    && b.pool().settings().hugePages() == BufMgrSettings.HugePages.TRY ? b : null;
        });
    }

    @Test
    public void ioMethodDirectOpensRelationFilesWithODirect() throws Exception {
        BufferManager bufmgr = configure("the buffer manager bound to io_method=direct",
                b -> b.pool().method().name().equals("direct"), "ioMethod.target", "(io.method=direct)");
        // The buffer manager starts on the fallback and swaps to direct live: the storage manager switched
        // to O_DIRECT before the method was published (the settings keep what activation chose).
        assertTrue("the storage manager opens with O_DIRECT", bufmgr.storage().directIo());
        long relNumber = 200000 + ThreadLocalRandom.current().nextInt(100000);
        int blocks = 64;
        SmgrRelation rel = NumberedRelation.create(bufmgr, relNumber, blocks);
        try {
            String info = Files.readString(Path.of("/proc/self/fdinfo/" + rel.fd(0)));
            String flags = info.lines().filter(l -> l.startsWith("flags:")).findFirst().orElseThrow();
            long octal = Long.parseLong(flags.substring("flags:".length()).trim(), 8);
            assertEquals(info, OpenFlags.O_DIRECT, octal & OpenFlags.O_DIRECT);
            NumberedRelation.streamAndCheck(bufmgr, rel, blocks);
            assertNotNull("shared buffers are offered for io_uring's registered buffers by default",
                    bufmgr.pool().aio().registeredBuffers());
        } finally {
            rel.unlink();
        }
    }

    /** {@code io_uring_registered_buffers = false}: the restarted pool offers nothing, and reads stay right. */
    @Test
    public void registeredBuffersCanBeTurnedOffInTheConfiguration() throws Exception {
        BufferManager bufmgr = configure("the buffer manager bound to io_method=direct without registered buffers",
                b -> b.pool().method().name().equals("direct") && !b.pool().settings().registeredBuffers(),
                "ioMethod.target", "(io.method=direct)", "io_uring_registered_buffers", false);
        assertNull(bufmgr.pool().aio().registeredBuffers());
        NumberedRelation.roundTrip(bufmgr, 300000, 64);
    }

    /**
     * {@code huge_pages}: by default ({@code try}) the container's pool is in 2 MB pages
     * where the kernel allows transparent huge pages; {@code off} through ConfigAdmin restarts it in
     * 4 kB pages, and reads stay right.
     */
    @Test
    public void hugePagesByDefaultAndOffThroughTheConfiguration() throws Exception {
        BufferManager before = current();
        Path thp = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
        boolean allowed = Files.exists(thp) && !Files.readString(thp).contains("[never]");
        String status = before.pool().hugePages();
        long mb = ((long) before.settings().sharedBuffers() * 8192 + (2 << 20) - 1) / (2 << 20) * 2; // whole 2 MB pages
        assertTrue(status, allowed ? status.equals("on: " + mb + " MB of " + mb + " MB in 2 MB pages")
                : status.startsWith("off: 0 kB of " + mb + " MB"));
        BufferManager bufmgr = configure("the buffer manager restarted with huge_pages = off",
                b -> b.pool().settings().hugePages() == BufMgrSettings.HugePages.OFF, "huge_pages", "off");
        assertEquals("off: huge_pages = off", bufmgr.pool().hugePages());
        NumberedRelation.roundTrip(bufmgr, 400000, 64);
    }

    /**
     * Stores {@code keysAndValues} as the buffer manager's configuration and waits until the
     * buffer manager service satisfies {@code ready} (SCR restarts it for most settings).
     */
    private BufferManager configure(String what, java.util.function.Predicate<BufferManager> ready, Object... keysAndValues)
            throws Exception {
        Configuration c = configAdmin.getConfiguration("org.pageio.bufmgr", "?");
        Dictionary<String, Object> props = new Hashtable<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            props.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        c.update(props);
        return await(what, () -> {
            BufferManager b = current();
            return b != null && ready.test(b) ? b : null;
        });
    }

    private BufferManager current() {
        var ref = context.getServiceReference(BufferManager.class);
        return ref == null ? null : context.getService(ref);
    }

    private static <T> T await(String what, java.util.function.Supplier<T> probe) throws InterruptedException {
        return awaitNonNull(what, 10_000, probe);
    }
}
