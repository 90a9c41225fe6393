package org.pageio.method.uring;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.service.metatype.annotations.Option;

/**
 * The configuration of {@code io_method=io_uring} (PID {@value UringIoMethod#PID}). A double
 * underscore in a method name is one underscore in the property name (the DS and Metatype
 * mapping), so {@code io__uring__force__async()} is the property {@code io_uring_force_async}.
 * Applies live, from the next submission on. Validation is {@link UringIoMethod.ForceAsync#parse}'s.
 */
@ObjectClassDefinition(id = UringIoMethod.PID, name = "pageio io_method=io_uring",
        description = "One io_uring ring per session. A change applies from the next submission on; an invalid"
                + " value is rejected with a warning and the value in force stays.")
public @interface UringConfig {

    @AttributeDefinition(name = UringIoMethod.FORCE_ASYNC_SETTING,
            description = "When a buffered I/O is submitted with IOSQE_ASYNC (punted to an io-wq worker at once"
                    + " instead of tried inline): auto = buffered reads of 32 kB and more while recent ones did not complete"
                    + " inline, i.e. their pages were not cached (the default); large = buffered reads of 32 kB and"
                    + " more; pg19 ="
                    + " PostgreSQL 19's rule, buffered reads once more than 4 I/Os are in flight or of 32 kB and"
                    + " more; pg18 = PostgreSQL 18's rule, buffered reads and writes once more than 4 are in flight;"
                    + " never. Direct I/O is never punted.",
            options = {@Option(label = "auto", value = "auto"), @Option(label = "large", value = "large"), @Option(label = "pg19", value = "pg19"),
                    @Option(label = "pg18", value = "pg18"), @Option(label = "never", value = "never")})
    String io__uring__force__async() default "auto";
}
