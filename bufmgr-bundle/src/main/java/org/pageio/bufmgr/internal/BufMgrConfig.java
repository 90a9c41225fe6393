package org.pageio.bufmgr.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The buffer manager's configuration (PID {@code org.pageio.bufmgr}), with PostgreSQL's names:
 * a double underscore in a method name stands for one underscore in the property name.
 */
@ObjectClassDefinition(name = "pageio buffer manager", description = "Shared buffers, I/O combining and concurrency, "
        + "as PostgreSQL names them. io_method and the io_method_* settings apply live (hot swap, the buffer pool "
        + "stays); any other change restarts the buffer manager.")
public @interface BufMgrConfig {

    @AttributeDefinition(name = "shared_buffers", description = "Buffer pool size in 8 kB blocks (16384 = 128MB; at most "
            + "134217728 = 1TB, and what the machine's memory allows)", min = "16", max = "134217728")
    int shared__buffers() default 16384;

    @AttributeDefinition(name = "effective_io_concurrency", min = "0", max = "1000")
    int effective__io__concurrency() default 16;

    @AttributeDefinition(name = "maintenance_io_concurrency", min = "0", max = "1000")
    int maintenance__io__concurrency() default 16;

    @AttributeDefinition(name = "io_combine_limit", description = "Largest combined read, in 8 kB blocks", min = "1", max = "128")
    int io__combine__limit() default 16;

    @AttributeDefinition(name = "io_max_combine_limit", description = "Restart needed; in 8 kB blocks", min = "1", max = "128")
    int io__max__combine__limit() default 16;

    @AttributeDefinition(name = "io_max_concurrency", description = "-1 = automatic", min = "-1", max = "1024")
    int io__max__concurrency() default -1;

    @AttributeDefinition(name = "zero_damaged_pages")
    boolean zero__damaged__pages() default false;

    @AttributeDefinition(name = "ignore_checksum_failure")
    boolean ignore__checksum__failure() default false;

    @AttributeDefinition(name = "track_io_timing")
    boolean track__io__timing() default false;

    @AttributeDefinition(name = "io_uring_registered_buffers", description = "Offer shared buffers to io_uring "
            + "(io_method io_uring, or direct on io_uring) to register once per session as fixed buffers: no page "
            + "mapping per I/O; each session's ring pins the pool and keeps 16 bytes per 4 kB page in the kernel")
    boolean io__uring__registered__buffers() default true;

    @AttributeDefinition(name = "huge_pages", description = "Back shared buffers with 2 MB pages (Linux transparent huge "
            + "pages): try falls back to normal pages, on refuses to start without them, off never uses them",
            options = {
                @org.osgi.service.metatype.annotations.Option(label = "try", value = "try"),
                @org.osgi.service.metatype.annotations.Option(label = "on", value = "on"),
                @org.osgi.service.metatype.annotations.Option(label = "off", value = "off")})
    String huge__pages() default "try";

    @AttributeDefinition(name = "read_stream_lookahead", options = {
        @org.osgi.service.metatype.annotations.Option(label = "PostgreSQL 18", value = "pg18"),
        @org.osgi.service.metatype.annotations.Option(label = "PostgreSQL 19", value = "pg19")})
    String read__stream__lookahead() default "pg19";

    @AttributeDefinition(name = "read_stream_policy", description = "pageio: PostgreSQL's look-ahead with pageio's"
            + " look-ahead policies where they apply (direct I/O ramp-up, grouped refills, paired reads); postgresql:"
            + " read_stream.c's look-ahead alone", options = {
        @org.osgi.service.metatype.annotations.Option(label = "pageio", value = "pageio"),
        @org.osgi.service.metatype.annotations.Option(label = "PostgreSQL", value = "postgresql")})
    String read__stream__policy() default "pageio";

    @AttributeDefinition(name = "bgwriter_delay", description = "Background writer sleep between rounds, in ms", min = "10", max = "10000")
    int bgwriter__delay() default 200;

    @AttributeDefinition(name = "bgwriter_lru_maxpages", description = "Most buffers the background writer writes per round; 0 disables it",
            min = "0", max = "1073741823")
    int bgwriter__lru__maxpages() default 100;

    @AttributeDefinition(name = "bgwriter_lru_multiplier", description = "Multiple of recent buffer allocations to keep clean ahead of the clock sweep",
            min = "0", max = "10")
    double bgwriter__lru__multiplier() default 2.0;

    @AttributeDefinition(name = "io_method target", description = "Which I/O method service the pool binds "
            + "(set from the io_method setting); changed live: in-flight I/O drains and the pool rebinds (hot swap)")
    String ioMethod_target() default "(io.method=worker)";

    @AttributeDefinition(name = "io_method_fallback", description = "The method used while the io_method one is not "
            + "registered (its bundle stopped); empty: new reads wait until it returns")
    String io__method__fallback() default "sync";

    @AttributeDefinition(name = "io_method_swap_timeout", description = "Milliseconds a hot swap waits for the I/O "
            + "in flight on the old method; on timeout the old method stays", min = "1", max = "600000")
    int io__method__swap__timeout() default 5000;

    @AttributeDefinition(name = "io_method_wait_timeout", description = "Milliseconds a read waits for an I/O method "
            + "when none is bound, before it fails", min = "0", max = "86400000")
    int io__method__wait__timeout() default 60000;

    @AttributeDefinition(name = "io_hang_warning", description = "Milliseconds an I/O may stay in flight before it is "
            + "reported once, with its aios row, its method and the threads' stacks; 0 turns the watch off", min = "0",
            max = "86400000")
    int io__hang__warning() default 30000;
}
