package org.pageio.settings;

import java.io.IOException;
import java.util.Arrays;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.LinkedHashSet;
import java.util.Set;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.MethodStatus;

/**
 * Changes {@code io_method} through ConfigAdmin (property {@code ioMethod.target} of PID
 * {@code org.pageio.bufmgr}, marked as set from the console) and waits until the buffer manager
 * has hot-swapped to it, or reports why it did not; then the old value is put back, so the
 * configuration never names a method that is not in force. Used by {@code pageio:swap} and by
 * {@code pageio:set io_method}.
 */
public final class MethodSwitch {

    /** How long to wait beyond the buffer manager's own swap timeout. */
    static final long WAIT_MILLIS = 35_000;

    private MethodSwitch() {
    }

    /** The running buffer manager, or an error line saying there is none. */
    public static BufferManager bufferManager(BundleContext context) {
        ServiceReference<BufferManager> ref = context.getServiceReference(BufferManager.class);
        BufferManager b = ref == null ? null : context.getService(ref);
        if (b == null) {
            throw new IllegalStateException("the buffer manager is not running (no BufferManager service); io_method cannot be"
                    + " swapped now");
        }
        return b;
    }

    /**
     * Stores {@code io_method = method} and waits for the swap. Returns the status with the
     * swap; throws with the buffer manager's reason (the old value is restored) when it failed.
     */
    public static MethodStatus switchTo(BundleContext context, ConfigurationAdmin configAdmin, String method) throws IOException {
        BufferManager bufmgr = bufferManager(context);
        MethodStatus before = bufmgr.methodStatus();
        Configuration c = configAdmin.getConfiguration(Setting.BUFMGR_PID, "?");
        Dictionary<String, Object> props = c.getProperties() == null ? new Hashtable<>() : c.getProperties();
        Object oldTarget = props.get(Setting.METHOD_TARGET);
        String[] oldMarks = SettingsService.marks(props);
        props.put(Setting.METHOD_TARGET, "(io.method=" + method + ")");
        Set<String> marks = new LinkedHashSet<>(Arrays.asList(oldMarks));
        marks.add(Setting.METHOD_TARGET);
        props.put(SettingsService.CONSOLE_MARK, marks.toArray(String[]::new));
        c.update(props);
        long until = System.currentTimeMillis() + WAIT_MILLIS;
        String failure = null;
        for (;;) {
            MethodStatus s = bufmgr.methodStatus();
            if (method.equals(s.method()) && method.equals(s.wanted())) {
                return s;
            }
            if (s.failures() > before.failures()) {
                failure = s.lastFailure();
                break;
            }
            if (System.currentTimeMillis() > until) {
                failure = "the buffer manager did not swap to io_method=" + method + " within " + WAIT_MILLIS / 1000 + " s ("
                        + s + ")";
                break;
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = "interrupted while waiting for the swap to io_method=" + method;
                break;
            }
        }
        // put the old value back: io_method stays what is in force
        Dictionary<String, Object> restore = c.getProperties() == null ? new Hashtable<>() : c.getProperties();
        if (oldTarget == null) {
            restore.remove(Setting.METHOD_TARGET);
        } else {
            restore.put(Setting.METHOD_TARGET, oldTarget);
        }
        restore.put(SettingsService.CONSOLE_MARK, oldMarks);
        c.update(restore);
        throw new IllegalArgumentException("io_method was not swapped to " + method + ": " + failure + "; io_method stays "
                + (before.method() == null ? "none" : before.method()));
    }
}
