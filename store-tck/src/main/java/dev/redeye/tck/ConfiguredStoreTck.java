package dev.redeye.tck;

import java.util.Set;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A TCK whose expected capabilities come from the run's configuration parameter
 * {@value TckRunner#EXPECT_PARAMETER} (what {@code redeye tck --expect} sets), handed to each test instance
 * with {@link #readExpectations}. The base of {@link UriStoreTck} and {@link SuppliedStoreTck}.
 */
abstract class ConfiguredStoreTck extends StoreTck {
    private volatile Set<Class<?>> expected = Set.of();
    private volatile boolean expectationStated;

    /** The capabilities listed by {@value TckRunner#EXPECT_PARAMETER}, if set; none otherwise. */
    @Override
    protected Set<Class<?>> expectedCapabilities() {
        return expected;
    }

    @Override
    boolean expectationsStated() {
        return expectationStated;
    }

    @Override
    String expectationSource() {
        return TckRunner.EXPECT_PARAMETER + " (redeye tck --expect)";
    }

    /** Takes the expectations from the configuration of the run {@code context} belongs to. */
    final void readExpectations(ExtensionContext context) {
        expected = TckRunner.expected(context);
        expectationStated = TckRunner.expectationStated(context);
    }
}
