package org.pageio.tck;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.pageio.api.ForwardingIoMethod;
import org.pageio.api.IoHandle;
import org.pageio.api.IoMethod;
import org.pageio.method.sync.SyncIoMethod;
import org.pageio.method.uring.UringIoMethod;
import org.pageio.method.worker.WorkerIoMethod;
import org.pageio.method.worker.WorkerSettings;

/**
 * The in-process kit on the methods {@link InProcessMethodKitTest} checks it with. Not tests of
 * their own (Surefire selects none of them): the test runs each through the JUnit Platform
 * launcher and checks what every kit test did.
 */
final class KitSubjects {

    private KitSubjects() {
    }

    /** {@code io_method=sync}, as its component is: no configuration. */
    static final class Sync extends InProcessMethodKit {
        @Override
        protected IoMethod newMethod() {
            return new SyncIoMethod();
        }
    }

    /** {@code io_method=io_uring} on the real kernel, probed in the test's thread, as outside a container. */
    static final class Uring extends InProcessMethodKit {
        @Override
        protected IoMethod newMethod() {
            return new UringIoMethod(UringIoMethod.ForceAsync.AUTO);
        }
    }

    /** {@code io_method=worker} with its default pool, stopped after each test by the harness ({@code close()}). */
    static final class Worker extends InProcessMethodKit {
        @Override
        protected IoMethod newMethod() {
            return new WorkerIoMethod(WorkerSettings.DEFAULTS);
        }
    }

    /** sync under a name its component description does not give: the kit's name test must fail. */
    static final class Misnamed extends InProcessMethodKit {
        @Override
        protected IoMethod newMethod() {
            return new MisnamedMethod();
        }
    }

    /** {@code sync} under another name. */
    static class RenamedSync extends ForwardingIoMethod {

        private final IoMethod sync = new SyncIoMethod();
        private final String name;

        RenamedSync(String name) {
            this.name = name;
        }

        @Override
        protected IoMethod delegate() {
            return sync;
        }

        @Override
        public String name() {
            return name;
        }
    }

    /**
     * {@code sync} named {@value #NAME}, the implementation class of the component description
     * {@code src/test/resources/OSGI-INF/misnamed.xml}, which says {@code io.method=misnamed}.
     */
    static final class MisnamedMethod extends RenamedSync {

        static final String NAME = "sync_renamed";

        MisnamedMethod() {
            super(NAME);
        }
    }

    /**
     * sync in a class no component description names: the kit's name test is aborted, not passed.
     * Counts the methods it makes and closes, to check that the harness closes each once.
     */
    static final class Undescribed extends InProcessMethodKit {

        static final String NAME = "sync_undescribed";
        static final AtomicInteger MADE = new AtomicInteger();
        static final AtomicInteger CLOSED = new AtomicInteger();
        static final AtomicInteger CLOSED_AGAIN = new AtomicInteger();

        @Override
        protected IoMethod newMethod() {
            MADE.incrementAndGet();
            return new Closeable();
        }

        /** sync named {@value Undescribed#NAME}, counting its closes. */
        static final class Closeable extends RenamedSync implements AutoCloseable {

            private final AtomicBoolean closed = new AtomicBoolean();

            Closeable() {
                super(NAME);
            }

            @Override
            public void close() {
                (closed.compareAndSet(false, true) ? CLOSED : CLOSED_AGAIN).incrementAndGet();
            }
        }
    }

    /** A method that says it cannot run here: every kit test that runs must fail, saying so. */
    static final class Unavailable extends InProcessMethodKit {

        static final String NAME = "kit_unavailable";
        static final String CAUSE = "this method is switched off to check that the kit fails it";

        @Override
        protected IoMethod newMethod() {
            return new IoMethod() {
                @Override
                public String name() {
                    return NAME;
                }

                @Override
                public Availability availability() {
                    return Availability.unavailable(CAUSE);
                }

                @Override
                public int submit(IoHandle[] handles, int count) {
                    throw new IllegalStateException("io_method=" + NAME + " is unavailable and was given " + count + " I/Os");
                }
            };
        }
    }
}
