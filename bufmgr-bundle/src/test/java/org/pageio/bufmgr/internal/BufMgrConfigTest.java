package org.pageio.bufmgr.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.pageio.bufmgr.BufMgrSettings;

/** The container's configuration (PID org.pageio.bufmgr) as the buffer manager's settings. */
class BufMgrConfigTest {

    /** A configuration as SCR hands it over: the given properties, the Metatype defaults for the rest. */
    static BufMgrConfig config(Map<String, Object> props) {
        return (BufMgrConfig) Proxy.newProxyInstance(BufMgrConfig.class.getClassLoader(), new Class<?>[] {BufMgrConfig.class},
                (proxy, m, args) -> props.containsKey(m.getName()) ? props.get(m.getName()) : m.getDefaultValue());
    }

    @Test
    void registeredBuffersAreOnByDefaultAndFollowIoUringRegisteredBuffers() {
        BufMgrSettings defaults = BufferManagerComponent.settingsOf(config(Map.of()), false);
        assertTrue(defaults.registeredBuffers());
        assertEquals(BufMgrSettings.defaults(), defaults, "the Metatype defaults are the settings' defaults");
        BufMgrSettings off = BufferManagerComponent.settingsOf(config(Map.of("io__uring__registered__buffers", false)), false);
        assertFalse(off.registeredBuffers());
        // a different value is a different configuration: modified() restarts the buffer manager
        assertFalse(off.equals(defaults));
    }
}
