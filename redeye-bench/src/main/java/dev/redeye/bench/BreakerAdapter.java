package dev.redeye.bench;

/**
 * One circuit breaker under benchmark, behind the smallest interface every competitor can implement: run a
 * trivial call through the breaker, and open the breaker. {@link BreakerType} creates one per competitor, so a
 * benchmark names its competitors as a JMH {@code @Param} and never depends on a library's own API.
 *
 * <p>Implementations are thread-safe exactly as far as the library under them is: every JMH benchmark in this
 * module shares one adapter between its threads, which is the point of the 2-thread figures.
 */
public interface BreakerAdapter extends AutoCloseable {

    /**
     * Runs the benchmark's trivial call (it returns a preallocated object) through the breaker.
     *
     * <p>Cost: whatever the library charges for one guarded call; the adapter adds one interface call and,
     * when the call is rejected, one {@code catch}.
     *
     * @return the call's result, or the library's rejection exception when the breaker refused the call
     *         (returned, not thrown, so that JMH consumes it like a result)
     */
    Object call();

    /**
     * Opens the breaker for at least an hour, so that every later {@link #call()} is rejected.
     *
     * @throws UnsupportedOperationException for {@link BreakerType#DIRECT}, which has no breaker
     * @throws IllegalStateException         if the breaker did not reject a probe call after being opened
     */
    void trip();

    /** Frees whatever the breaker holds (threads, stores); idempotent; never throws. */
    @Override
    void close();
}
