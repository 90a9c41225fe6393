package org.pageio.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pageio.posix.OpenFlags;
import org.pageio.posix.Posix;

/** The decorator base: it forwards every operation, and a decorator over a real method reads real files. */
class ForwardingIoMethodTest {

    @TempDir
    Path dir;

    /** Every operation of IoMethod but name() is overridden here, so no decorator silently gets a default. */
    @Test
    void forwardsEveryOperationOfIoMethod() throws Exception {
        List<String> missing = new ArrayList<>();
        for (Method m : IoMethod.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers()) || m.getName().equals("name")) {
                continue;
            }
            Method own = ForwardingIoMethod.class.getMethod(m.getName(), m.getParameterTypes());
            if (own.getDeclaringClass() != ForwardingIoMethod.class) {
                missing.add(m.getName());
            }
        }
        assertEquals(List.of(), missing, "IoMethod operations ForwardingIoMethod does not forward");
    }

    /** The optional operations come from the wrapped method, not from IoMethod's defaults. */
    @Test
    void optionalAnswersAreTheDelegates() {
        IoMethod direct = new IoMethod() {
            @Override
            public String name() {
                return "like-direct";
            }

            @Override
            public int submit(IoHandle[] handles, int count) {
                throw new AssertionError("not submitting here");
            }

            @Override
            public boolean bypassesPageCache() {
                return true;
            }

            @Override
            public boolean waitOnFdBeforeClose() {
                return true;
            }

            @Override
            public Availability availability() {
                return Availability.unavailable("no ring: io_uring_disabled=2");
            }
        };
        IoMethod decorator = decorate(direct, new AtomicInteger());
        assertTrue(decorator.bypassesPageCache());
        assertTrue(decorator.waitOnFdBeforeClose());
        assertEquals("no ring: io_uring_disabled=2", decorator.availability().cause());
    }

    /** A decorator that overrides only submit, over a threaded method, reads every block of a real file. */
    @Test
    void aDecoratorOverAThreadedMethodReadsARealFile() throws IOException {
        Path file = dir.resolve("rel");
        int blocks = 32;
        Files.write(file, Blocks.content("rel", blocks));
        int fd = Posix.open(file, OpenFlags.O_RDONLY, 0);
        AtomicInteger submitted = new AtomicInteger();
        try (TestMethods.Threaded threaded = new TestMethods.Threaded(2);
                Arena arena = Arena.ofShared();
                AioContext ctx = AioContext.create(decorate(threaded, submitted), new AioConfig(4, 8, 16));
                IoSession s = ctx.openSession("reader")) {
            MemorySegment[] bufs = new MemorySegment[blocks];
            IoHandle[] hs = new IoHandle[blocks];
            long[] gens = new long[blocks];
            IoReturn[] rets = new IoReturn[blocks];
            for (int b = 0; b < blocks; b++) {
                bufs[b] = arena.allocate(AioCoreTest.BLOCK, 4096);
                rets[b] = new IoReturn();
                hs[b] = s.acquire();
                gens[b] = hs[b].generation();
                hs[b].setIovec(0, bufs[b]).setReturn(rets[b]).startReadv(fd, 1, (long) b * AioCoreTest.BLOCK);
                if (b % 8 == 7) {
                    for (int w = b - 7; w <= b; w++) {
                        s.await(hs[w], gens[w]);
                        assertEquals(IoResult.OK, rets[w].status(), rets[w].message());
                        Blocks.assertBlock("rel", w, bufs[w]);
                    }
                }
            }
        } finally {
            Posix.close(fd, file);
        }
        assertEquals(blocks, submitted.get(), "every read passed through the decorator's submit");
    }

    private static IoMethod decorate(IoMethod inner, AtomicInteger submitted) {
        return new ForwardingIoMethod() {
            @Override
            protected IoMethod delegate() {
                return inner;
            }

            @Override
            public String name() {
                return "counting";
            }

            @Override
            public int submit(IoHandle[] handles, int count) {
                submitted.addAndGet(count);
                return super.submit(handles, count);
            }
        };
    }
}
