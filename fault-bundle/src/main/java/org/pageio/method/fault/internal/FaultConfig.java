package org.pageio.method.fault.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration of {@code io.method=fault} (PID {@code org.pageio.method.fault}). */
@ObjectClassDefinition(name = "pageio fault-injecting I/O method", description = "io_method=fault wraps another method "
        + "and spoils the I/Os its rules match. For tests; registered only while this configuration exists.")
public @interface FaultConfig {

    @AttributeDefinition(name = "delegate", description = "The io_method it wraps: sync, worker, io_uring, direct, or any "
            + "registered name except fault")
    String delegate() default "worker";

    @AttributeDefinition(name = "rules", description = "One rule each: KIND [OP] [file=TEXT] [blocks=FIRST[-LAST]] "
            + "[fraction=F] [times=N] [delay=MS]; KIND eio, short_read, enospc, delay, reorder; OP read, write, fsync, any")
    String[] rules() default {};

    @AttributeDefinition(name = "seed", description = "Seed of the random fraction")
    long seed() default 42;
}
