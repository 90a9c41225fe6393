package org.pageio.method.worker;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The configuration of {@code io_method=worker} (PID {@value WorkerIoMethod#PID}), in PostgreSQL's
 * names. A double underscore in a method name is one underscore in the property name (the DS
 * and Metatype mapping), so {@code io__min__workers()} is the attribute {@code io_min_workers}.
 * Every setting applies live (PostgreSQL: SIGHUP). Validation is {@link WorkerSettings}'s.
 */
@ObjectClassDefinition(id = WorkerIoMethod.PID, name = "pageio io_method=worker",
        description = "The I/O worker pool of io_method=worker, sized as PostgreSQL 19 sizes it: it grows by at most"
                + " one worker per io_worker_launch_interval while the submission queue is deeper than the number of"
                + " workers, and the highest-numbered worker above io_min_workers retires after io_worker_idle_timeout."
                + " Changes apply at once; an invalid combination is rejected and the previous settings stay.")
public @interface WorkerConfig {

    @AttributeDefinition(name = "io_min_workers", min = "1", max = "32",
            description = "Workers that are always running (1..32, at most io_max_workers). Default 2.")
    int io__min__workers() default WorkerSettings.DEFAULT_MIN_WORKERS;

    @AttributeDefinition(name = "io_max_workers", min = "1", max = "32",
            description = "The most workers the pool grows to (1..32, at least io_min_workers). Default 8.")
    int io__max__workers() default WorkerSettings.DEFAULT_MAX_WORKERS;

    @AttributeDefinition(name = "io_worker_idle_timeout", min = "0",
            description = "Milliseconds the highest-numbered worker above io_min_workers stays idle before it exits"
                    + " (0 = at once). Default 60000 (1 minute).")
    int io__worker__idle__timeout() default WorkerSettings.DEFAULT_IDLE_TIMEOUT_MS;

    @AttributeDefinition(name = "io_worker_launch_interval", min = "0",
            description = "Milliseconds between two launches of a worker the backlog asked for. Default 100.")
    int io__worker__launch__interval() default WorkerSettings.DEFAULT_LAUNCH_INTERVAL_MS;

    @AttributeDefinition(name = "io_workers (PostgreSQL 18)", min = "-1", max = "32",
            description = "PostgreSQL 18's setting, removed in 19: io_workers = n means io_min_workers = io_max_workers"
                    + " = n (a fixed pool) and overrides both. -1 = unset (the default).")
    int io__workers() default WorkerSettings.UNSET;

    @AttributeDefinition(name = "io_worker_policy", description = "pageio: PostgreSQL's pool with pageio's hand-off"
            + " policy (a CPU cap on wake-ups for short I/Os, issuers that take back or help with queued I/O);"
            + " postgresql: method_worker.c's wake-ups alone, waiting issuers only sleep. Default pageio.",
            options = {
                @org.osgi.service.metatype.annotations.Option(label = "pageio", value = HandOffPolicy.PAGEIO),
                @org.osgi.service.metatype.annotations.Option(label = "PostgreSQL", value = HandOffPolicy.POSTGRESQL)})
    String io__worker__policy() default HandOffPolicy.PAGEIO;
}
