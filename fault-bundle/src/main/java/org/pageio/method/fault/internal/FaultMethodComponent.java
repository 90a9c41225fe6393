package org.pageio.method.fault.internal;

import java.util.Arrays;
import java.util.Hashtable;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Filter;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.util.tracker.ServiceTracker;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.method.fault.FaultInjectingMethod;
import org.pageio.method.fault.FaultPlan;
import org.pageio.posix.Errno;

/**
 * Makes {@code io.method=fault} selectable like any method: while configuration PID
 * {@code org.pageio.method.fault} exists, it tracks the delegate method by its {@code io.method}
 * name and, while that is registered, registers a {@link FaultInjectingMethod} around it as an
 * {@link IoMethod} service with {@code io.method=fault}, {@code fault.delegate=<name>} and
 * {@code fault.rules=<rules>}. When the delegate goes, the decorator is unregistered (the buffer
 * manager bound to it restarts) and closed.
 *
 * <p>A configuration that does not parse registers a method that is unavailable with the cause
 * (so {@code pageio:methods} shows it, and selecting it fails with that line) and injects nothing.
 *
 * <p>Threads: activation, deactivation and the tracker's callbacks run in SCR's or the
 * registering thread; they are serialised on this object's monitor. A new configuration with the
 * same delegate and seed whose rules parse applies live ({@link #modified}): the same service, its
 * plan replaced, a buffer manager bound to it undisturbed; any other change re-does the activation.
 */
@Component(immediate = true, service = {}, configurationPid = FaultMethodComponent.PID,
        configurationPolicy = ConfigurationPolicy.REQUIRE)
@Designate(ocd = FaultConfig.class)
public final class FaultMethodComponent {

    public static final String PID = "org.pageio.method.fault";

    private static final System.Logger LOG = System.getLogger(PID);

    private ServiceTracker<IoMethod, IoMethod> tracker;
    private ServiceRegistration<IoMethod> registration;
    private FaultInjectingMethod method;
    private BundleContext context;
    private String delegateName;
    private FaultPlan plan;
    private String[] rules;
    private long seed;

    @Activate
    synchronized void activate(FaultConfig config, BundleContext context) {
        this.context = context;
        this.delegateName = config.delegate() == null ? "" : config.delegate().trim();
        this.rules = config.rules() == null ? new String[0] : config.rules();
        this.seed = config.seed();
        String problem = null;
        if (delegateName.isEmpty() || delegateName.equals(FaultInjectingMethod.NAME) || !delegateName.matches("[A-Za-z0-9_.-]+")) {
            problem = "delegate '" + delegateName + "' is not a method name: set delegate to sync, worker, io_uring, direct"
                    + " or another registered io_method (not fault)";
        } else {
            try {
                plan = FaultPlan.parse(rules);
            } catch (IllegalArgumentException e) {
                problem = e.getMessage();
            }
        }
        if (problem != null) {
            String line = "io_method=fault: rejected configuration " + PID + ": " + problem;
            LOG.log(System.Logger.Level.WARNING, line);
            register(new Rejected(line));
            return;
        }
        Filter filter;
        try {
            filter = context.createFilter("(&(objectClass=" + IoMethod.class.getName() + ")(" + IoMethod.PROPERTY + "="
                    + delegateName + "))");
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException(e); // the name was checked above
        }
        tracker = new ServiceTracker<>(context, filter, null) {
            @Override
            public IoMethod addingService(ServiceReference<IoMethod> ref) {
                IoMethod delegate = super.addingService(ref);
                delegateArrived(delegate);
                return delegate;
            }

            @Override
            public void removedService(ServiceReference<IoMethod> ref, IoMethod service) {
                delegateLeft(service);
                super.removedService(ref, service);
            }
        };
        tracker.open();
        if (registration == null) {
            LOG.log(System.Logger.Level.INFO, "io_method=fault: waiting for io_method=" + delegateName + " to be registered");
        }
    }

    private synchronized void delegateArrived(IoMethod delegate) {
        if (method != null || context == null) {
            return; // already wrapping one of that name
        }
        method = new FaultInjectingMethod(delegate, plan, seed);
        register(method);
        LOG.log(System.Logger.Level.INFO, "io_method=fault: wrapping io_method=" + delegateName + " with " + plan.rules());
    }

    private synchronized void delegateLeft(IoMethod delegate) {
        if (method != null && method.delegate() == delegate) {
            unregister();
        }
    }

    private void register(IoMethod m) {
        registration = context.registerService(IoMethod.class, m, properties());
    }

    /** The service's properties: its name, the delegate's, the rules in force. Under this. */
    private Hashtable<String, Object> properties() {
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(IoMethod.PROPERTY, FaultInjectingMethod.NAME);
        props.put("fault.delegate", delegateName);
        props.put("fault.rules", rules.clone());
        return props;
    }

    private void unregister() {
        if (registration != null) {
            try {
                registration.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the bundle is stopping
            }
            registration = null;
        }
        if (method != null) {
            method.close();
            method = null;
        }
    }

    /**
     * A changed configuration: new rules for the same delegate and seed replace the running
     * method's plan live ({@link FaultInjectingMethod#setPlan}) and its service property
     * {@code fault.rules}; rules that do not parse are refused with one WARNING, the plan in force
     * staying. Another delegate or seed, or a method not registered yet, re-does the activation.
     */
    @Modified
    void modified(FaultConfig config, BundleContext context) {
        String[] next = config.rules() == null ? new String[0] : config.rules();
        String nextDelegate = config.delegate() == null ? "" : config.delegate().trim();
        synchronized (this) {
            if (method != null && registration != null && nextDelegate.equals(delegateName) && config.seed() == seed) {
                FaultPlan p;
                try {
                    p = FaultPlan.parse(next);
                } catch (IllegalArgumentException e) {
                    LOG.log(System.Logger.Level.WARNING, "io_method=fault: rejected configuration " + PID + ": "
                            + e.getMessage() + "; the rules in force stay " + plan.rules());
                    return;
                }
                method.setPlan(p);
                plan = p;
                rules = next.clone();
                registration.setProperties(properties());
                LOG.log(System.Logger.Level.INFO, "io_method=fault: rules changed live to " + p.rules());
                return;
            }
        }
        deactivate();
        activate(config, context);
    }

    @Deactivate
    void deactivate() {
        ServiceTracker<IoMethod, IoMethod> t;
        synchronized (this) {
            t = tracker;
            tracker = null;
        }
        if (t != null) {
            t.close(); // outside the monitor: it calls removedService
        }
        synchronized (this) {
            unregister();
            context = null;
        }
    }

    /** The decorator in service now, or null (tests, console). */
    public synchronized FaultInjectingMethod method() {
        return method;
    }

    @Override
    public synchronized String toString() {
        return "io_method=fault over " + delegateName + " with " + Arrays.toString(rules);
    }

    /** Registered instead when the configuration is wrong: unavailable, with the line saying why. */
    private static final class Rejected implements IoMethod {
        private final String cause;

        Rejected(String cause) {
            this.cause = cause;
        }

        @Override
        public String name() {
            return FaultInjectingMethod.NAME;
        }

        @Override
        public Availability availability() {
            return Availability.unavailable(cause);
        }

        @Override
        public boolean needsSynchronousExecution(IoHandle handle) {
            return true;
        }

        @Override
        public void performSynchronously(IoHandle handle, org.pageio.posix.CallState callState) {
            handle.complete(-Errno.EINVAL);
        }

        @Override
        public int submit(IoHandle[] handles, int count) {
            for (int i = 0; i < count; i++) {
                handles[i].complete(-Errno.EINVAL);
            }
            return count;
        }
    }

}
