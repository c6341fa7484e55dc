package dev.redeye;

/**
 * A source of monotonic nanoseconds, for the breaker's <em>local</em> durations: how old a local-cache entry
 * is, when an open view is re-verified, how long this instance holds off after losing a trial claim or after a
 * trial failure it could not write, how long a permit's trial slot is leased, whether a call took longer than
 * {@code callTimeout}, how long a call or a store operation took (for observers), and the cap on trial
 * eligibility after this instance first saw an open period. What other instances read ({@code openedAt},
 * {@code lastFailureAt}, the {@code now} passed to stores) comes from the configured {@link java.time.Clock}
 * instead (see "Time" in the {@linkplain dev.redeye package documentation}).
 *
 * <p>Only differences between two readings mean anything; the origin is arbitrary (as for
 * {@link System#nanoTime()}). A ticker must never go backwards, and must be thread-safe and cheap: the engine
 * reads it on the distributed-mode call path (once per call) and on local mode's open and timed paths, never on
 * local mode's healthy path. The default, {@link #systemTicker()}, is {@link System#nanoTime()}. Tests and
 * simulations pass a virtual one ({@link CircuitBreakerBuilder#ticker(Ticker)}), usually together with a
 * virtual clock, so that minutes of local durations take no real time:
 *
 * <pre>{@code
 * AtomicLong nanos = new AtomicLong();
 * CircuitBreaker b = CircuitBreaker.builder().clock(virtualClock).ticker(nanos::get).build();
 * }</pre>
 *
 * <p>A few local waits are real waits and follow real time whatever the ticker says: the thread that
 * interrupts a sync call at its {@code callTimeout}, the completion of an async call's {@code callTimeout},
 * and how long a caller blocks for another caller's local-cache read.
 */
@FunctionalInterface
public interface Ticker {

    /** Nanoseconds since an arbitrary, fixed origin; never smaller than an earlier reading. */
    long read();

    /** The ticker of {@link System#nanoTime()}, the default. */
    static Ticker systemTicker() {
        return SystemTicker.INSTANCE;
    }
}
