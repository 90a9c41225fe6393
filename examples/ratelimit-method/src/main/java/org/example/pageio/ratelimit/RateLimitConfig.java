package org.example.pageio.ratelimit;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration PID {@code org.example.pageio.ratelimit}. */
@ObjectClassDefinition(name = "example rate-limiting I/O method")
public @interface RateLimitConfig {

    @AttributeDefinition(name = "iops", description = "I/Os per second let through (token bucket)", min = "1")
    int iops() default 20000;

    @AttributeDefinition(name = "burst", description = "I/Os let through at once after a quiet spell", min = "1")
    int burst() default 256;

    @AttributeDefinition(name = "delegate.target", description = "The method it wraps, as a filter")
    String delegate_target() default "(io.method=sync)";
}
