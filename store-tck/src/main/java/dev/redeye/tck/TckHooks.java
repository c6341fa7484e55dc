package dev.redeye.tck;

import dev.redeye.api.BreakerState;
import dev.redeye.spi.Store;
import java.util.Set;

/** The implementer's hooks ({@link StoreTck}'s protected methods) as the rules call them. */
interface TckHooks {
    /** {@code StoreTck.corrupt}. */
    void corrupt(Store client, String key) throws Exception;

    /** {@code StoreTck.interruptFeed}. */
    void interruptFeed(Store client) throws Exception;

    /** {@code StoreTck.rewind}. */
    void rewind(Store client, String key, BreakerState state) throws Exception;

    /** {@code StoreTck.backendThread}. */
    boolean backendThread(Thread thread);

    /** {@code StoreTck.expectedCapabilities}. */
    Set<Class<?>> expectedCapabilities();

    /** Whether the expected capabilities were stated by the implementer. */
    boolean expectationsStated();

    /** Where the expectation of R0.1 comes from, as a failure message names it. */
    String expectationSource();
}
