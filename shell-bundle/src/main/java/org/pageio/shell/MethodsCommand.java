package org.pageio.shell;

import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.report.Json;
import org.pageio.report.TextTable;
import org.pageio.settings.MethodsTable;
import org.pageio.shell.command.Commands;

/**
 * {@code pageio:methods [--format text|json]}: the {@link MethodsTable}, every registered I/O method
 * with whether it can run here, and every method component whose service is not registered yet.
 */
@Component(service = MethodsCommand.class, property = {
        Commands.SCOPE + "=" + Commands.PAGEIO,
        Commands.FUNCTION + "=methods"
})
public final class MethodsCommand {

    private final MethodsTable methods;

    @Activate
    public MethodsCommand(@Reference MethodsTable methods) {
        this.methods = methods;
    }

    @Descriptor("lists the registered I/O methods (io_method), whether each can run here, and why not")
    public String methods(
            @Descriptor("output format: text (default) or json")
            @Parameter(names = {"-f", "--format"}, absentValue = "text") String format) {
        boolean json = Json.requested(format);
        TextTable table = methods.table();
        return json ? table.toJson().stripTrailing() : table.toString().stripTrailing();
    }
}
