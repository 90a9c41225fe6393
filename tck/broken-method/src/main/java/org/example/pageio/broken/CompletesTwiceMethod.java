package org.example.pageio.broken;

import java.lang.foreign.Arena;
import org.osgi.service.component.annotations.Component;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.posix.CallState;

/**
 * A deliberately broken method for the conformance kit's self-test: it performs each submitted
 * I/O and then completes it a second time. The core ignores the second call, so every byte is
 * still right; the kit must fail it anyway, saying that an I/O was completed twice (on a busy
 * system the second call can land after the handle was reused, completing someone else's I/O).
 */
@Component(service = IoMethod.class, property = IoMethod.PROPERTY + "=broken_twice")
public final class CompletesTwiceMethod implements IoMethod {

    private final ThreadLocal<CallState> cs = ThreadLocal.withInitial(() -> CallState.allocate(Arena.ofAuto()));

    @Override
    public String name() {
        return "broken_twice";
    }

    @Override
    public int submit(IoHandle[] handles, int count) {
        for (int i = 0; i < count; i++) {
            IoHandle h = handles[i];
            h.performSynchronously(cs.get());
            h.complete(h.rawResult()); // the bug
        }
        return count;
    }
}
