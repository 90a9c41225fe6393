package org.pageio.method.posixaio;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The configuration of {@code io_method=posix_aio} (PID {@value PosixAioIoMethod#PID}): glibc's
 * {@code struct aioinit} in PostgreSQL-style names. A double underscore in a method name is one
 * underscore in the property name (the DS and Metatype mapping), so {@code posix__aio__threads()}
 * is {@code posix_aio_threads}. Validation is {@link PosixAioSettings}'s.
 */
@ObjectClassDefinition(id = PosixAioIoMethod.PID, name = "pageio io_method=posix_aio",
        description = "POSIX asynchronous I/O through the C library; on Linux glibc runs the requests in a pool of its"
                + " own threads, sized by these settings. posix_aio_threads and posix_aio_num size that pool once per"
                + " process, before its first request (a change applies at the next start); posix_aio_idle_time"
                + " and posix_aio_fds_per_file apply at once. An invalid value is rejected with a warning and the values in force stay.")
public @interface PosixAioConfig {

    @AttributeDefinition(name = PosixAioSettings.THREADS, min = "1", max = "1024",
            description = "glibc's aio_threads: the most threads glibc runs requests in (1..1024). Requests on one"
                    + " file descriptor run one after another in one thread. Default 20, glibc's.")
    int posix__aio__threads() default PosixAioSettings.DEFAULT_THREADS;

    @AttributeDefinition(name = PosixAioSettings.NUM, min = "32", max = "65536",
            description = "glibc's aio_num: requests glibc preallocates room for (32..65536, rounded down to a"
                    + " multiple of 32); it allocates more when more are queued. Default 64, glibc's.")
    int posix__aio__num() default PosixAioSettings.DEFAULT_NUM;

    @AttributeDefinition(name = PosixAioSettings.IDLE_TIME, min = "1", max = "3600",
            description = "glibc's aio_idle_time: seconds an idle glibc thread waits for a request before it exits"
                    + " (1..3600). Default 1, glibc's.")
    int posix__aio__idle__time() default PosixAioSettings.DEFAULT_IDLE_TIME;

    @AttributeDefinition(name = PosixAioSettings.FDS_PER_FILE, min = "1", max = "64",
            description = "Descriptors a file's reads are spread over: its own and duplicates of it (1..64). glibc"
                    + " runs one request per descriptor at a time, so this many reads of one file run at once at most;"
                    + " 1 queues every request on the file's own descriptor. Applies live. Default 8.")
    int posix__aio__fds__per__file() default PosixAioSettings.DEFAULT_FDS_PER_FILE;
}
