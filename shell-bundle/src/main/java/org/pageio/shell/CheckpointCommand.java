package org.pageio.shell;

import java.io.IOException;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.pageio.bufmgr.BufferManager;
import org.pageio.shell.command.Commands;

/**
 * {@code pageio:checkpoint} (PostgreSQL's {@code CHECKPOINT}): writes every dirty buffer in file
 * order, fsyncs every segment written since the last checkpoint, and only then prints
 * PostgreSQL's "checkpoint complete" line. A write or fsync that fails fails the command with one
 * line naming relation, block (or file) and errno.
 */
@Component(service = CheckpointCommand.class, property = {
        Commands.SCOPE + "=" + Commands.PAGEIO,
        Commands.FUNCTION + "=checkpoint"
})
public final class CheckpointCommand {

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile BufferManager bufmgr;

    @Descriptor("writes every dirty buffer in file order, fsyncs the files written, then reports (like CHECKPOINT)")
    public String checkpoint() throws IOException {
        BufferManager b = bufmgr;
        if (b == null) {
            throw new IllegalStateException("the buffer manager is not running (see pageio:methods and pageio:settings)");
        }
        return b.checkpoint().toString();
    }
}
