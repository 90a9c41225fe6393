package org.pageio.settings;

import java.util.Collections;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.pageio.api.IoMethod;

/**
 * Every registered {@link IoMethod} service, available or not, for the commands that list,
 * swap to, check or drill the methods. SCR binds and unbinds on its own threads, the commands
 * read from Gogo's: the map is concurrent and {@link #all} is a live view that a reader iterates
 * without a lock (weakly consistent, as a method may come or go meanwhile).
 */
@Component(service = RegisteredMethods.class)
public final class RegisteredMethods {

    private final Map<ServiceReference<IoMethod>, IoMethod> methods = new ConcurrentHashMap<>();
    private final Map<ServiceReference<IoMethod>, IoMethod> view = Collections.unmodifiableMap(methods);

    @Reference(service = IoMethod.class, cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    void addMethod(ServiceReference<IoMethod> ref, IoMethod method) {
        methods.put(ref, method);
    }

    void removeMethod(ServiceReference<IoMethod> ref) {
        methods.remove(ref);
    }

    /** The registered methods by service reference: a live, read-only, concurrent view. */
    public Map<ServiceReference<IoMethod>, IoMethod> all() {
        return view;
    }
}
