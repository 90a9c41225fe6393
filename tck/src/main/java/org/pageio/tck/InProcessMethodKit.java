package org.pageio.tck;

import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.junit.Ignore;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.runners.BlockJUnit4ClassRunner;
import org.junit.runners.model.FrameworkMethod;
import org.junit.runners.model.InitializationError;
import org.junit.runners.model.Statement;
import org.opentest4j.TestAbortedException;
import org.pageio.api.IoMethod;

/**
 * The method conformance kit in process, on JUnit 5, for unit-test speed: no container, no
 * bundle. A method's build extends it in a unit test that Surefire runs:
 *
 * <pre>
 * class MineKitTest extends InProcessMethodKit {
 *     &#64;Override protected IoMethod newMethod() { return new MineMethod(); }
 * }
 * </pre>
 *
 * <p>Its one {@link TestFactory} yields a {@link DynamicTest} for each JUnit 4 {@code @Test} of
 * {@link MethodConformanceKit}, named as that method. Each runs the kit's own test body the way
 * JUnit 4 runs it in the container (its {@code @Before}, {@code @After}, {@code @Rule} timeout and
 * {@code @Test} attributes, through JUnit 4's {@link BlockJUnit4ClassRunner}), on a fresh kit
 * instance whose {@link MethodConformanceKit#method()} is a fresh {@link #newMethod()}, closed with
 * {@link #closeMethod} after the test. The buffer manager test runs over an in-process buffer
 * manager behind the fault decorator ({@link FaultRig}), as in the container.
 *
 * <p>What the container gives the kit is done in process as the component would be: the method's
 * {@value IoMethod#PROPERTY} name is checked against its component description
 * ({@code OSGI-INF/*.xml}, listed in {@code Service-Component}) whose implementation class is the
 * method's class, as bnd wrote it into the jar or class folder on the class path; the test that
 * stops the method with I/O in flight retires it from its context (its service going away), then
 * closes it with {@link #closeMethod} (its deactivation), and starts a {@link #newMethod()} in its
 * place. When no description names the method's class, the name test is aborted; so is any test
 * marked {@link NeedsContainer} (none of the kit's is). An aborted test's message starts with the
 * test's name and contains {@value #NEEDS_CONTAINER}: that rule is checked only by
 * {@link MethodBundleKit}; a method's build runs both. A JUnit 4 assumption that fails in a kit
 * test is reported aborted too.
 *
 * <p>Needs JUnit Jupiter on the test class path (the build's own; this artifact's dependency on
 * it is optional). The dynamic tests of one factory run one after another, each in a thread of
 * its own as the kit's timeout rule makes them.
 */
public abstract class InProcessMethodKit {

    /** What the abort message of a {@link NeedsContainer} test says after its name. */
    public static final String NEEDS_CONTAINER = "needs the OSGi container: run MethodBundleKit in Failsafe";

    /**
     * A new, ready method for one test: constructed and activated as the method's component
     * would be, available on this machine. Called once per kit test, and once more by the test that
     * stops and starts the method, in the test's thread.
     */
    protected abstract IoMethod newMethod();

    /**
     * Releases what {@link #newMethod()} made, once per method: after the test closed its context,
     * or when the kit stops the method (after retiring it from the context, as a component is
     * deactivated once its service is gone). By default closes it when it is {@link AutoCloseable}.
     */
    protected void closeMethod(IoMethod method) throws Exception {
        if (method instanceof AutoCloseable c) {
            c.close();
        }
    }

    /** Every test of {@link MethodConformanceKit}, in JUnit 4's order, as a dynamic test named as the method. */
    @TestFactory
    public final Stream<DynamicTest> conformanceKit() {
        KitRunner runner = KitRunner.create(this);
        return runner.tests().stream().map(t -> DynamicTest.dynamicTest(t.getName(),
                URI.create("method:" + t.getDeclaringClass().getName() + "#" + t.getName() + "()"), () -> runner.run(t)));
    }

    /**
     * The kit's test bodies, bound to a method this harness made. Public only because JUnit 4 runs
     * public classes only; only the harness makes one.
     */
    public static final class Kit extends MethodConformanceKit {

        private final InProcessMethodKit host;
        private final IoMethod method;
        /**
         * The methods this test made and did not close yet: the first, and those started again.
         * Synchronized: changed in the test's thread, read after it by the harness.
         */
        private final List<IoMethod> open = Collections.synchronizedList(new ArrayList<>());

        private Kit(InProcessMethodKit host, IoMethod method) {
            this.host = host;
            this.method = method;
            open.add(method);
        }

        @Override
        protected IoMethod method() {
            return method;
        }

        /**
         * The {@value IoMethod#PROPERTY} property of the component description whose implementation
         * class is the method's class; aborts the test when the class path has none (a method made
         * by a class that is not the component).
         */
        @Override
        protected Object registeredName() throws Exception {
            String name = ComponentDescriptions.property(method.getClass(), IoMethod.PROPERTY);
            if (name == null) {
                throw new TestAbortedException("nameIsItsServicePropertyIoMethod " + NEEDS_CONTAINER + " (no component"
                        + " description on the class path has the implementation class " + method.getClass().getName()
                        + " with a property " + IoMethod.PROPERTY + ")");
            }
            return name;
        }

        /**
         * The method stopped as its component would be: {@code unregistering} first (the service
         * going away), then {@link InProcessMethodKit#closeMethod} (the deactivation); started
         * again as {@link InProcessMethodKit#newMethod()}.
         */
        @Override
        protected MethodLifeCycle lifeCycle(Runnable unregistering) {
            return new MethodLifeCycle() {
                @Override
                public String what() {
                    return "the method (in process: closeMethod, then newMethod)";
                }

                @Override
                public void stop() {
                    unregistering.run();
                    try {
                        closeOnce(method);
                    } catch (Exception e) {
                        throw new AssertionError(io() + ": closing the method as its component deactivates failed: " + e, e);
                    }
                }

                @Override
                public IoMethod start() {
                    IoMethod m = host.newMethod();
                    open.add(m);
                    return m;
                }

                @Override
                public void close() {
                }
            };
        }

        /** Closes {@code m} through the host, once (by identity: a method may have its own equals). */
        void closeOnce(IoMethod m) throws Exception {
            if (open.removeIf(x -> x == m)) {
                host.closeMethod(m);
            }
        }

        /** Closes every method this test made and did not close yet; the first failure is thrown, the others kept. */
        void closeAll() throws Exception {
            Exception failure = null;
            List<IoMethod> made;
            synchronized (open) {
                made = List.copyOf(open);
            }
            for (IoMethod m : made) {
                try {
                    closeOnce(m);
                } catch (Exception e) {
                    if (failure == null) {
                        failure = e;
                    } else {
                        failure.addSuppressed(e);
                    }
                }
            }
            if (failure != null) {
                throw failure;
            }
        }
    }

    /**
     * JUnit 4's runner for the kit, used only for what it builds around one test: the statement
     * that runs the {@code @Before}s, the test, the {@code @After}s under the kit's rules. Its
     * instances come from {@link #createTest()}, so the kit needs no public constructor.
     */
    private static final class KitRunner extends BlockJUnit4ClassRunner {

        private final InProcessMethodKit host;
        /** The kit instance the current test runs on; set by {@link #createTest()}, in the test's thread. */
        private Kit current;

        private KitRunner(InProcessMethodKit host) throws InitializationError {
            super(Kit.class);
            this.host = host;
        }

        static KitRunner create(InProcessMethodKit host) {
            try {
                return new KitRunner(host);
            } catch (InitializationError e) {
                // a bug of the kit, not of the method under test
                throw new IllegalStateException("the conformance kit is not a valid JUnit 4 test class: " + e.getCauses(), e);
            }
        }

        List<FrameworkMethod> tests() {
            return computeTestMethods();
        }

        @Override
        protected void validateConstructor(List<Throwable> errors) {
            // createTest() builds every instance itself
        }

        @Override
        protected Object createTest() {
            IoMethod m = host.newMethod();
            if (m == null) {
                throw new IllegalStateException(host.getClass().getName() + ".newMethod() returned null: it must return a"
                        + " new method for each test");
            }
            current = new Kit(host, m);
            return current;
        }

        /** Runs {@code test} as JUnit 4 would in the container, then closes the method it made. */
        void run(FrameworkMethod test) throws Throwable {
            NeedsContainer needs = test.getAnnotation(NeedsContainer.class);
            if (needs != null) {
                throw new TestAbortedException(test.getName() + " " + NEEDS_CONTAINER + " (it checks " + needs.value() + ")");
            }
            Ignore ignore = test.getAnnotation(Ignore.class);
            if (ignore != null) {
                throw new TestAbortedException(test.getName() + " is @Ignore'd in the kit: " + ignore.value());
            }
            current = null;
            Statement statement = methodBlock(test);
            Throwable failure = null;
            try {
                statement.evaluate();
            } catch (org.junit.internal.AssumptionViolatedException e) {
                failure = new TestAbortedException(test.getName() + ": " + e.getMessage(), e);
            } catch (Throwable t) {
                failure = t;
            }
            if (current != null) {
                try {
                    current.closeAll();
                } catch (Throwable t) {
                    if (failure == null) {
                        failure = new AssertionError(current.io() + ": closing the method after " + test.getName()
                                + " failed: " + t, t);
                    } else {
                        failure.addSuppressed(t);
                    }
                }
                current = null;
            }
            if (failure != null) {
                throw failure;
            }
        }
    }
}
