package org.pageio.bufmgr;

import java.io.IOException;
import java.nio.file.Path;
import org.pageio.bufmgr.smgr.RelFileLocator;
import org.pageio.bufmgr.smgr.SmgrRelation;
import org.pageio.bufmgr.smgr.StorageManager;
import org.pageio.method.sync.SyncIoMethod;

/**
 * The child JVM of {@link OtherUserTest}, run as an unprivileged user over a data directory whose
 * files another user owns (readable, not writable): reads the relation, then tries to change a
 * page and checkpoint, and to extend the relation; prints one line per outcome.
 */
public final class OtherUserChild {

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long relNumber = Long.parseLong(args[1]);
        int blocks = Integer.parseInt(args[2]);
        try (BufferManagerCore core = BufferManagerCore.open(dir, new BufMgrSettings.Builder().sharedBuffers(64).maxSessions(4)
                .build(), new SyncIoMethod())) {
            SmgrRelation rel = core.storage().open(new RelFileLocator(StorageManager.DEFAULT_TABLESPACE, relNumber));
            int good = 0;
            try (BufferSession s = core.openSession("client")) {
                for (long b = 0; b < blocks; b++) {
                    int buf = s.readBuffer(rel, b, null);
                    good += TestPages.check(relNumber, b, s.page(buf)) == null ? 1 : 0;
                    s.releaseBuffer(buf);
                }
                System.out.println("READ " + good + " of " + blocks);
                BufferWriteTest.modify(s, rel, relNumber, 1, 3);
                try {
                    core.checkpoint();
                    System.out.println("CHECKPOINT OK");
                } catch (IOException e) {
                    System.out.println("CHECKPOINT REFUSED: " + e.getMessage());
                }
                int buf = s.readBuffer(rel, 3, null);
                System.out.println("BLOCK 3 " + (WriteTestPages.generation(s.page(buf), relNumber, 3, 1) == 1 ? "KEPT" : "LOST"));
                s.releaseBuffer(buf);
                try {
                    s.extendBy(rel, 1, new int[1], null);
                    System.out.println("EXTEND OK");
                } catch (IOException e) {
                    System.out.println("EXTEND REFUSED: " + e.getMessage());
                }
            }
            System.out.println("PINNED " + core.pool().pinnedBuffers());
        }
    }
}
