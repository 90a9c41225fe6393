package org.pageio.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestExecutionResult.Status;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * {@link InProcessMethodKit} on real methods, run through the JUnit Platform launcher as a
 * method's build runs it: every test of {@link MethodConformanceKit} runs as a dynamic test of its
 * name, and on {@code sync}, {@code io_uring} (the real kernel's) and {@code worker} all pass. The
 * name is checked against the method's component description, where it can fail or, without one,
 * be aborted; each method made is closed once; on a method that is unavailable every test fails.
 * The tests marked {@link NeedsContainer}, which would be aborted, are exactly
 * {@link #CONTAINER_ONLY} (none), so that one cannot appear unnoticed.
 */
class InProcessMethodKitTest {

    /** The kit's tests that need the OSGi container ({@code tck/README.md}, "In process, JUnit 5"): none. */
    static final Set<String> CONTAINER_ONLY = Set.of();
    /** Aborted in process when the method's class has no component description on the class path. */
    static final String NAME_TEST = "nameIsItsServicePropertyIoMethod";

    /** What each dynamic test of one run did, by display name, and what else went wrong in the run. */
    record Run(Map<String, TestExecutionResult> tests, List<String> problems) {

        Set<String> with(Status status) {
            Set<String> names = new TreeSet<>();
            tests.forEach((name, r) -> {
                if (r.getStatus() == status) {
                    names.add(name);
                }
            });
            return names;
        }

        String message(String test) {
            return tests.get(test).getThrowable().map(Throwable::getMessage).orElse("");
        }

        /** Each failed test with its failure's first line, for an assertion message. */
        String failures() {
            StringBuilder b = new StringBuilder();
            for (String name : with(Status.FAILED)) {
                b.append("\n  ").append(name).append(": ").append(message(name).lines().findFirst().orElse(""));
            }
            return b.toString();
        }
    }

    /** Runs the in-process kit subclass {@code kit} through the Jupiter engine and collects what each dynamic test did. */
    static Run run(Class<? extends InProcessMethodKit> kit) {
        Map<String, TestExecutionResult> tests = new TreeMap<>();
        List<String> problems = new ArrayList<>();
        TestExecutionListener listener = new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (id.isTest()) {
                    if (tests.put(id.getDisplayName(), result) != null) {
                        problems.add("two dynamic tests named " + id.getDisplayName());
                    }
                } else if (result.getStatus() != Status.SUCCESSFUL) {
                    problems.add(id.getDisplayName() + " " + result);
                }
            }

            @Override
            public void executionSkipped(TestIdentifier id, String reason) {
                problems.add(id.getDisplayName() + " skipped: " + reason);
            }
        };
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(kit))
                .filters(EngineFilter.includeEngines("junit-jupiter")).build(), listener);
        return new Run(tests, problems);
    }

    /** The names of the kit's JUnit 4 tests, read from the kit itself. */
    static Set<String> kitTests() {
        Set<String> names = new TreeSet<>();
        for (Method m : MethodConformanceKit.class.getMethods()) {
            if (m.isAnnotationPresent(org.junit.Test.class)) {
                names.add(m.getName());
            }
        }
        return names;
    }

    @Test
    void theContainerOnlyTestsAreExactlyTheDocumentedOnes() {
        Set<String> marked = new TreeSet<>();
        for (Method m : MethodConformanceKit.class.getMethods()) {
            if (m.isAnnotationPresent(NeedsContainer.class)) {
                assertTrue(m.isAnnotationPresent(org.junit.Test.class), m.getName() + " is marked @NeedsContainer but is no test");
                marked.add(m.getName());
            }
        }
        assertEquals(new TreeSet<>(CONTAINER_ONLY), marked, "the kit's @NeedsContainer tests: a test that can run in"
                + " process must, and a new container-only one is listed here and in tck/README.md");
        assertTrue(kitTests().size() >= 46, "the kit has " + kitTests().size() + " tests, not at least 46");
    }

    @Test
    void syncPassesEveryKitTestInProcessButTheContainerOnlyOnes() {
        assertEveryTestRanAndPassed(run(KitSubjects.Sync.class), "sync");
    }

    @Test
    void ioUringPassesEveryKitTestInProcessButTheContainerOnlyOnes() {
        assertEveryTestRanAndPassed(run(KitSubjects.Uring.class), "io_uring");
    }

    @Test
    void workerPassesEveryKitTestInProcessButTheContainerOnlyOnes() {
        assertEveryTestRanAndPassed(run(KitSubjects.Worker.class), "worker");
    }

    /** The name is checked in process against the method's component description, and it can fail there. */
    @Test
    void aMethodNamedOtherwiseThanItsComponentDescriptionFailsTheNameTest() {
        Run run = run(KitSubjects.Misnamed.class);
        assertTrue(run.problems().isEmpty(), "the run itself: " + run.problems());
        assertEquals(Set.of(NAME_TEST), run.with(Status.FAILED), "failed:" + run.failures());
        assertTrue(run.message(NAME_TEST).startsWith("io_method=" + KitSubjects.MisnamedMethod.NAME + " is registered with"
                + " the service property io.method=misnamed; name() must equal it"), run.message(NAME_TEST));
        assertEquals(CONTAINER_ONLY, run.with(Status.ABORTED), "aborted");
        assertEquals(kitTests().size() - CONTAINER_ONLY.size() - 1, run.with(Status.SUCCESSFUL).size(), "passed");
    }

    /**
     * Without a component description for the method's class the name test is aborted, saying why,
     * never passed; every method the harness made (one per test, one more for the restart) is closed
     * exactly once.
     */
    @Test
    void aMethodWithoutAComponentDescriptionHasItsNameTestAborted() {
        KitSubjects.Undescribed.MADE.set(0);
        KitSubjects.Undescribed.CLOSED.set(0);
        KitSubjects.Undescribed.CLOSED_AGAIN.set(0);
        Run run = run(KitSubjects.Undescribed.class);
        int made = kitTests().size() - CONTAINER_ONLY.size() + 1;
        assertEquals(made, KitSubjects.Undescribed.MADE.get(), "methods made");
        assertEquals(made, KitSubjects.Undescribed.CLOSED.get(), "methods closed");
        assertEquals(0, KitSubjects.Undescribed.CLOSED_AGAIN.get(), "methods closed twice");
        assertTrue(run.problems().isEmpty(), "the run itself: " + run.problems());
        assertEquals(Set.of(), run.with(Status.FAILED), "failed:" + run.failures());
        Set<String> aborted = new TreeSet<>(CONTAINER_ONLY);
        aborted.add(NAME_TEST);
        assertEquals(aborted, run.with(Status.ABORTED), "aborted");
        assertTrue(run.message(NAME_TEST).startsWith(NAME_TEST + " " + InProcessMethodKit.NEEDS_CONTAINER + " (no component"
                + " description on the class path has the implementation class "
                + KitSubjects.Undescribed.Closeable.class.getName()),
                run.message(NAME_TEST));
        assertEquals(kitTests().size() - aborted.size(), run.with(Status.SUCCESSFUL).size(), "passed");
    }

    /** Failures reach the build: the kit on a method that cannot run fails every test it runs, with the kit's reason. */
    @Test
    void anUnavailableMethodFailsEveryTestThatRunsInProcess() {
        Run run = run(KitSubjects.Unavailable.class);
        assertTrue(run.problems().isEmpty(), "the run itself: " + run.problems());
        assertEquals(kitTests(), run.tests().keySet(), "the dynamic tests are the kit's tests");
        assertEquals(CONTAINER_ONLY, run.with(Status.ABORTED), "aborted");
        Set<String> expectedFailures = new TreeSet<>(kitTests());
        expectedFailures.removeAll(CONTAINER_ONLY);
        assertEquals(expectedFailures, run.with(Status.FAILED), "failed");
        for (String name : expectedFailures) {
            assertTrue(run.tests().get(name).getThrowable().orElseThrow() instanceof AssertionError, name + ": "
                    + run.tests().get(name).getThrowable().orElseThrow());
            assertTrue(run.message(name).contains("io_method=" + KitSubjects.Unavailable.NAME + " must be available on this"
                    + " machine: " + KitSubjects.Unavailable.CAUSE), name + ": " + run.message(name));
        }
    }

    /**
     * {@code run} has one dynamic test per kit test; none failed; the aborted ones are exactly
     * {@link #CONTAINER_ONLY}, each saying why; all others (at least 40) passed.
     */
    private static void assertEveryTestRanAndPassed(Run run, String method) {
        assertTrue(run.problems().isEmpty(), "io_method=" + method + ": the run itself: " + run.problems());
        assertEquals(kitTests(), run.tests().keySet(), "io_method=" + method + ": the dynamic tests are the kit's tests");
        assertEquals(Set.of(), run.with(Status.FAILED), "io_method=" + method + " failed kit tests in process:" + run.failures());
        assertEquals(CONTAINER_ONLY, run.with(Status.ABORTED), "io_method=" + method + ": aborted");
        for (String name : CONTAINER_ONLY) {
            assertTrue(run.message(name).startsWith(name + " " + InProcessMethodKit.NEEDS_CONTAINER), run.message(name));
        }
        int passed = run.with(Status.SUCCESSFUL).size();
        assertEquals(kitTests().size() - CONTAINER_ONLY.size(), passed, "io_method=" + method + ": passed");
        assertTrue(passed >= 40, "io_method=" + method + ": only " + passed + " kit tests passed");
        System.out.println("io_method=" + method + " in process: " + passed + " kit tests passed, "
                + run.with(Status.ABORTED).size() + " aborted (container only)");
    }
}
