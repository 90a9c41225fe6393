package org.pageio.itest.tck;

import org.pageio.tck.MethodBundleKit;

/**
 * The method conformance kit against a bundle built outside this repository, named by the system
 * property {@value #BUNDLE_PROPERTY}: what {@code ./pageio tck path/to/method-bundle.jar} runs
 * ({@link MethodBundleKit} does the work; a method bundle's own build extends that instead).
 *
 * <p>Not named {@code *IT}: failsafe runs it only when asked ({@code -Dit.test=ThirdPartyMethodTck}),
 * and {@code TckSelfIT} runs it on the example and on the broken fixture.
 */
public class ThirdPartyMethodTck extends MethodBundleKit {
}
