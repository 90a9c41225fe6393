package org.pageio.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.api.IoMethod;
import org.pageio.method.direct.DirectIoMethod;
import org.pageio.method.direct.DirectSettings;
import org.pageio.method.posixaio.PosixAioIoMethod;
import org.pageio.method.posixaio.PosixAioSettings;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.uring.UringIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;

/**
 * Two minutes of soak on real files over every method here (sync, worker, io_uring, direct, posix_aio): hot swaps and injected faults
 * happened, every page checked held what the model says, nothing hung, and a fresh buffer manager
 * read every block back as written.
 */
class SoakTest {

    @TempDir
    Path dir;

    @Test
    void twoMinutesOfSoakSwapMethodsInjectFaultsAndFindEveryByteAsWritten() throws Exception {
        WorkerIoMethod worker = new WorkerIoMethod(WorkerSettings.DEFAULTS);
        UringIoMethod uring = new UringIoMethod(UringIoMethod.ForceAsync.LARGE);
        assertTrue(uring.availability().available(), "io_uring must run here: " + uring.availability().cause());
        DirectIoMethod direct = new DirectIoMethod(DirectSettings.DEFAULTS);
        assertTrue(direct.availability().available(), "direct must run here: " + direct.availability().cause());
        PosixAioIoMethod posixAio = new PosixAioIoMethod(PosixAioSettings.DEFAULTS);
        assertTrue(posixAio.availability().available(), "posix_aio must run here: " + posixAio.availability().cause());
        try {
            long seed = System.nanoTime(); // a new one each run, printed: ./pageio soak --seed replays it
            Soak.Result r = Soak.run(new Soak.Options(dir, TimeUnit.MINUTES.toMillis(2), 3, seed,
                    List.<IoMethod>of(new SyncIoMethod(), worker, uring, direct, posixAio), 200, null));
            System.out.println(r + " (seed " + seed + ")");
            assertTrue(r.ok(), r + " (seed " + seed + ")");
            assertTrue(r.swaps() >= 5, "hot swaps: " + r);
            assertTrue(r.faultsInjected() > 0, "faults: " + r);
            assertTrue(r.pagesChecked() > 1000, "pages checked: " + r);
            assertTrue(r.writes() > 0 && r.reads() > 0, r.toString());
            assertEquals(0, r.wrongPages());
            assertEquals(0, r.leakedPins(), r.toString());
            assertEquals(0, r.leakedHandles(), r.toString());
        } finally {
            direct.close();
            worker.close();
        }
    }

    @Test
    void badOptionsNameTheOptionAndItsRange() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Soak.Options(dir, 1000, 0, 1, List.of(new SyncIoMethod()), 100, null));
        assertEquals("--sessions 0 is out of range: valid values are 1..32", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Soak.Options(dir, 1000, 2, 1, List.of(), 100, null));
    }
}
