package org.pageio.table.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The table service's configuration (PID {@value TableServiceComponent#PID}): a double underscore in
 * a method name is one underscore in the property name. Every setting applies live, to the scans
 * that start after the change.
 */
@ObjectClassDefinition(id = TableServiceComponent.PID, name = "pageio tables",
        description = "Settings of pageio's tables; they apply live, to the next scan.")
public @interface TableConfig {

    @AttributeDefinition(name = "scan_sets_visibility_map", description = "Sequential and bitmap heap scans prune the"
            + " nearly full pages they read whose deleted rows no snapshot can see, and mark those that become"
            + " all-visible in the visibility map, as PostgreSQL 19's read-only scans do (on); or leave that to"
            + " VACUUM, as PostgreSQL 18 does (off). A scan's --set scan_sets_visibility_map=on|off overrides it.")
    boolean scan__sets__visibility__map() default true;
}
