package org.pageio.shell;

import java.io.IOException;

import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.report.Json;
import org.pageio.report.TextTable;
import org.pageio.settings.SettingsService;
import org.pageio.shell.command.Commands;

/**
 * {@code pageio:settings} (PostgreSQL's {@code pg_settings}) and {@code pageio:set NAME VALUE}: the
 * shell's face of the {@link SettingsService}, which owns the settings model, validation and the
 * settings file. Nothing here decides what is valid.
 */
@Component(service = SettingsCommands.class, property = {
        Commands.SCOPE + "=" + Commands.PAGEIO,
        Commands.FUNCTION + "=settings",
        Commands.FUNCTION + "=set"
})
public final class SettingsCommands {

    private final SettingsService settings;

    @Activate
    public SettingsCommands(@Reference SettingsService settings) {
        this.settings = settings;
    }

    @Descriptor("shows the settings of the buffer manager and the worker pool like pg_settings: value, unit, source,"
            + " PostgreSQL's context, whether a change applies live or restarts the buffer manager, valid range")
    public String settings(
            @Descriptor("output format: text (default) or json")
            @Parameter(names = {"-f", "--format"}, absentValue = "text") String format) throws IOException {
        boolean json = Json.requested(format);
        TextTable t = settings.table();
        if (json) {
            return t.toJson().stripTrailing();
        }
        StringBuilder out = new StringBuilder(t.toString().stripTrailing());
        SettingsService.FileReport r = settings.fileReport();
        if (r != null && !r.refused().isEmpty()) {
            out.append("\n\nrefused from ").append(r.file()).append(" (the old values stay in force):");
            for (String m : r.refused()) {
                out.append("\n  ").append(m);
            }
        }
        return out.toString();
    }

    @Descriptor("changes a setting through ConfigAdmin, like ALTER SYSTEM SET + reload, and saves it in"
            + " <data>/conf/org.pageio.settings.cfg; refuses invalid values, keeping the old one")
    public String set(
            @Descriptor("output format: text (default) or json")
            @Parameter(names = {"-f", "--format"}, absentValue = "text") String format,
            @Descriptor("setting, e.g. effective_io_concurrency, io_method, shared_buffers") String name,
            @Descriptor("value, with a PostgreSQL unit where the setting has one: 128MB, 8kB, 60s, 100ms") String value)
            throws IOException {
        boolean json = Json.requested(format); // refuse an unknown format before changing anything
        String outcome = settings.setFrom("pageio:set", name, value);
        if (!json) {
            return outcome;
        }
        return Json.inline(g -> {
            g.writeStartObject();
            g.writeStringField("name", name);
            g.writeStringField("value", value);
            g.writeStringField("result", outcome);
            g.writeEndObject();
        }).stripTrailing();
    }
}
