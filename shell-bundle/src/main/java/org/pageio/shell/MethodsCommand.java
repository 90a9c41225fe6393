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
 * with whether it can run here, and every method component whose service is not registered yet. In
 * text, a cause longer than {@value #CAUSE_WIDTH} characters is shortened in its row and given whole
 * as a numbered note under the table.
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
        return render(methods.table(), json);
    }

    /** Widest a cause is shown in the text table; a longer one is a numbered note under it. */
    static final int CAUSE_WIDTH = 60;

    /**
     * The table as text, a long cause (a seccomp refusal runs to hundreds of characters) shortened
     * in its row and given whole below the table; or as JSON, every cause whole in its row.
     */
    static String render(TextTable table, boolean json) {
        if (json) {
            return table.toJson().stripTrailing();
        }
        int cause = table.header().indexOf("cause");
        return (cause < 0 ? table.toString() : table.toString(cause, CAUSE_WIDTH)).stripTrailing();
    }
}
