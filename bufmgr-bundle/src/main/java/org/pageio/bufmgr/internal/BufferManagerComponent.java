package org.pageio.bufmgr.internal;

import java.nio.file.Path;
import java.util.Locale;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;
import org.pageio.api.AioContext;
import org.pageio.api.IoMethod;
import org.pageio.bufmgr.BufMgrSettings;
import org.pageio.bufmgr.BufferManager;
import org.pageio.bufmgr.BufferPool;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.bufmgr.stats.StatIo;

/**
 * The buffer manager service. Binds the I/O method statically (greedy), {@code worker} by
 * default as in PostgreSQL 18 and 19: when the method the
 * {@code ioMethod.target} filter names comes or goes, or the configuration changes, SCR
 * deactivates this component (users of the service are deactivated first, closing their
 * sessions) and activates a new one. An unavailable method fails activation with its cause.
 * The data directory is the framework property {@code pageio.data} (default {@code ./data}).
 */
@Component(service = BufferManager.class, configurationPid = "org.pageio.bufmgr", immediate = true)
@Designate(ocd = BufMgrConfig.class)
public final class BufferManagerComponent implements BufferManager {

    private static final System.Logger LOG = System.getLogger("org.pageio.bufmgr");

    @Reference(name = "ioMethod", target = "(io.method=worker)", policy = ReferencePolicy.STATIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private IoMethod method;

    private BufMgrSettings settings;
    private StorageManager storage;
    private AioContext aio;
    private BufferPool pool;

    @Activate
    void activate(BufMgrConfig config, BundleContext context) {
        BufMgrSettings.Builder b = new BufMgrSettings.Builder();
        b.sharedBuffers = config.shared__buffers();
        b.effectiveIoConcurrency = config.effective__io__concurrency();
        b.maintenanceIoConcurrency = config.maintenance__io__concurrency();
        b.ioCombineLimit = config.io__combine__limit();
        b.ioMaxCombineLimit = config.io__max__combine__limit();
        b.ioMaxConcurrency = config.io__max__concurrency();
        b.zeroDamagedPages = config.zero__damaged__pages();
        b.ignoreChecksumFailure = config.ignore__checksum__failure();
        b.trackIoTiming = config.track__io__timing();
        b.readStreamLookahead = BufMgrSettings.Lookahead.valueOf(config.read__stream__lookahead().toUpperCase(Locale.ROOT));
        b.directIo = method.bypassesPageCache(); // io_method=direct: relation files are opened with O_DIRECT
        settings = b.build();
        String warning = settings.combineLimitWarning();
        if (warning != null) {
            LOG.log(System.Logger.Level.WARNING, warning);
        }
        String data = context.getProperty("pageio.data");
        storage = new StorageManager(Path.of(data == null ? "data" : data), settings.segmentBlocks(), settings.directIo());
        try {
            aio = AioContext.create(method, settings.aioConfig());
            pool = new BufferPool(settings, storage, aio, new StatIo());
        } catch (RuntimeException e) {
            if (aio != null) {
                aio.close();
            }
            storage.close();
            throw e;
        }
    }

    @Deactivate
    void deactivate() {
        try {
            aio.close(); // fails, naming them, if sessions are still open
            pool.close();
        } finally {
            storage.close();
        }
    }

    @Override
    public BufferPool pool() {
        return pool;
    }

    @Override
    public StorageManager storage() {
        return storage;
    }

    @Override
    public BufMgrSettings settings() {
        return settings;
    }
}
