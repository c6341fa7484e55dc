package dev.redeye;

import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.StoreOperation;

/**
 * Sees what a {@link CircuitBreaker} does, for metrics and events: operations appearing and evicted, sampled
 * call durations, rejections, ignored errors, trial outcomes, this instance's transitions, store operations
 * with their durations, and the store's transition feed. Register one with {@link CircuitBreaker#addObserver};
 * {@code redeye-micrometer}'s {@code RedeyeMetrics} is one.
 *
 * <h2>Cost</h2>
 * With no observer registered the breaker pays one volatile read and a branch per call, nothing else. With
 * observers, a healthy call in local mode pays that plus, under {@link CallTiming#SAMPLED}, a comparison with
 * a ticker's epoch, and for at most one call per operation every 10 ms two {@link System#nanoTime()} reads
 * and {@link #callTimed}; nothing else is called on the healthy path (counts are read from
 * {@link ObservedOperation#metrics()} when wanted, never pushed). In distributed mode every store operation
 * is timed ({@link #storeOperation}): two clock reads next to a network round trip.
 * The breaker allocates nothing for an observer; what the observer allocates is its own business, and on the
 * healthy path it should allocate nothing.
 *
 * <h2>Threads and exceptions</h2>
 * Methods are called on the thread that did the work (a caller's, the store's feed thread, an async
 * completion's), possibly concurrently: implementations must be thread-safe and quick. An exception thrown by
 * an observer is logged (at most every 10 s per breaker) and never reaches the call. Every method has an
 * empty default.
 *
 * <h2>Feed</h2>
 * In distributed mode, registering an observer subscribes the breaker to the store's
 * {@link dev.redeye.spi.TransitionFeed} (if it has one and the breaker is not subscribed yet), so that
 * {@link #feedEvent} and {@link #feedGap} report what the fleet does, and what this instance knows of the
 * operations it holds follows the fleet's transitions without a store read.
 */
public interface CircuitBreakerObserver {

    /** Which calls the breaker times for {@link #callTimed}. */
    enum CallTiming {
        /** None (the default). */
        NONE,
        /**
         * At most one call per operation per 10 ms tick (every call of an operation called less often than
         * that), each standing for the calls of its outcome since the previous timed one: the timed call's
         * {@code weight}. Costs the healthy path one comparison; needs one JVM-wide daemon ticker thread while
         * any observer samples.
         */
        SAMPLED,
        /** Every call, with weight 1: two {@link System#nanoTime()} reads per call. */
        EVERY_CALL
    }

    /** How a call that ran ended, for the breaker. */
    enum CallOutcome {
        /** Returned, and counted as a success. */
        SUCCESSFUL,
        /** Counted as a failure (an exception, a failed result, a call timeout). */
        FAILED,
        /**
         * Did not return, and did not count as a failure: an exception {@code recordFailure} declined, an
         * interrupt or a cancellation, or a permit released unused.
         */
        IGNORED
    }

    /** How a half-open trial this instance ran ended. */
    enum TrialOutcome {
        /** The trial succeeded (its success was recorded, fenced by its open period). */
        SUCCEEDED,
        /** The trial failed (its failure was recorded: the breaker reopened unless the period had moved on). */
        FAILED,
        /**
         * The trial recorded nothing and gave its claim back: interrupted, cancelled, released unused, or a
         * permit never completed whose lease ran out.
         */
        RELEASED
    }

    /**
     * Which calls this observer wants timed for {@link #callTimed}; default {@link CallTiming#NONE}. Read once,
     * when the observer is registered. The breaker times a call when any observer wants it timed, and tells
     * every observer the weight it stands for.
     */
    default CallTiming callTiming() {
        return CallTiming.NONE;
    }

    /**
     * The breaker started holding {@code operation} (its first call, or its first after an eviction). Called
     * once per operation object, before any other method names it, on the thread of that first use.
     */
    default void operationAdded(ObservedOperation operation) {
    }

    /** The breaker evicted {@code operation} (past {@code maxOperations}); it will not be named again. */
    default void operationEvicted(ObservedOperation operation) {
    }

    /**
     * A timed call ended ({@code execute}, {@code executeAsync} and the decorators; permits are not timed).
     * The weights of an operation's timed calls of one outcome add up to the count of its calls of that
     * outcome (up to the last timed one), so {@code sum(nanos * weight)} estimates their total time, and is
     * exact when every call is timed.
     *
     * @param nanos  how long the call took ({@link System#nanoTime()} around it)
     * @param weight how many calls of this outcome this one stands for (itself included; 0 when another
     *               timed call of the same moment already stood for them)
     */
    default void callTimed(ObservedOperation operation, CallOutcome outcome, long nanos, long weight) {
    }

    /**
     * A call was rejected without running: {@link dev.redeye.api.CircuitOpenException} or
     * {@link dev.redeye.api.StoreUnavailableException}, before any fallback answered it. A rejection answered
     * by {@code executeOrElse}, which otherwise builds no exception, is built for the observers while any is
     * registered; an observer that only counts rejections can read {@link Metrics#rejections()} instead.
     */
    default void callRejected(ObservedOperation operation, RuntimeException rejection) {
    }

    /**
     * A call ended with an exception the breaker did not count as a failure: one {@code recordFailure}
     * declined, an interrupt, or a cancellation.
     */
    default void errorIgnored(ObservedOperation operation, Throwable error) {
    }

    /** A half-open trial this instance ran ended. */
    default void trialEnded(ObservedOperation operation, TrialOutcome outcome) {
    }

    /**
     * A store operation ended (distributed mode only).
     *
     * @param failed whether it failed (a store error, whatever the store threw)
     * @param nanos  how long it took
     */
    default void storeOperation(StoreOperation operation, boolean failed, long nanos) {
    }

    /**
     * A transition this instance's own write caused (a call's outcome, a trial's, or {@code forceOpen},
     * {@code forceHalfOpen}, {@code reset} called on this breaker): the events the builder's
     * {@code onStateChange} listener gets, on the thread that made the write, after that listener. Quiet
     * writes that are no transition (a success clearing sub-threshold failures) are not reported. In
     * distributed mode the same transition usually comes back through {@link #feedEvent} too.
     */
    default void stateChanged(TransitionEvent event) {
    }

    /**
     * A transition arrived on the store's feed: any instance's, this one's included, for any operation (also
     * ones this instance does not hold).
     */
    default void feedEvent(TransitionEvent event) {
    }

    /**
     * This instance became an outlier for an operation under a quorum: its own failures reach the threshold while
     * the fleet stays closed ({@link Outlier}); once per local trip, on the thread of the write that showed it.
     */
    default void outlier(Outlier outlier) {
    }

    /** The store's feed may have missed events (a dropped connection, a reader that fell behind). */
    default void feedGap() {
    }
}
