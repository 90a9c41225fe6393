package org.pageio.tck;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a test of {@link MethodConformanceKit} that checks something only an OSGi container has
 * and {@link InProcessMethodKit} cannot imitate (it imitates the service property and the bundle's
 * stop and start; no test is marked). {@link InProcessMethodKit} does not run such a test: it
 * reports it aborted, with {@link #value()} as the reason; {@link MethodBundleKit} in a Failsafe
 * run checks it. Every other test of the kit must run outside a container.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface NeedsContainer {

    /** What the test needs from the container, as a phrase ("the method's service registration"). */
    String value();
}
