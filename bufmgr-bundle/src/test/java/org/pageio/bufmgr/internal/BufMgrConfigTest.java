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

    @Test
    void hugePagesAreTryByDefaultFollowHugePagesAndABadValueNamesTheSetting() {
        assertEquals(BufMgrSettings.HugePages.TRY, BufferManagerComponent.settingsOf(config(Map.of()), false).hugePages());
        BufMgrSettings on = BufferManagerComponent.settingsOf(config(Map.of("huge__pages", "on")), false);
        assertEquals(BufMgrSettings.HugePages.ON, on.hugePages());
        assertFalse(on.equals(BufMgrSettings.defaults()), "a change restarts the buffer manager");
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> BufferManagerComponent.settingsOf(config(Map.of("huge__pages", "yes")), false));
        assertEquals("huge_pages = 'yes' is not valid: valid values are try, on, off", e.getMessage());
    }
}
