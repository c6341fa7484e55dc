package dev.redeye.bench;

import dev.failsafe.CircuitBreakerOpenException;
import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeExecutor;
import dev.redeye.CheckedSupplier;
import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.micrometer.RedeyeMetrics;
import dev.redeye.resilience4j.Resilience4jBreakers;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The competitors of the local-mode benchmarks, each behind {@link BreakerAdapter} (the Caffeine
 * {@code CacheType} pattern): a benchmark takes a {@code @Param BreakerType} and calls {@link #create()}.
 *
 * <p>Every breaker is configured with its library's defaults except where a benchmark needs otherwise, and
 * that is said here: the open period is one hour (so a tripped breaker stays open for the whole
 * measurement), and Resilience4j's rejection exception is built without a stack trace
 * ({@code writableStackTraceEnabled(false)}), which is what redeye does by default; Failsafe 3.3.2 has no such
 * option. Each competitor is called the way its documentation shows, with the decorated call built once:
 * {@code breaker.execute(op, call)} for redeye ({@code executeOrElse(op, call, value)} for
 * {@link #REDEYE_OR_ELSE}), a supplier decorated once with
 * {@code CircuitBreaker.decorateSupplier} for Resilience4j, and one {@code FailsafeExecutor} for Failsafe.
 */
public enum BreakerType {
    /** No breaker at all: the call itself, the limit every breaker is measured against. */
    DIRECT(Direct::new),
    /** redeye in local mode (no store), reference defaults, stack traces off (its default). */
    REDEYE(() -> new Redeye(false)),
    /**
     * {@link #REDEYE} called with {@code executeOrElse(op, call, orElse)}: a rejected call returns a fallback
     * value and builds no exception. The target: a rejection at most 2x {@link #REDEYE}'s healthy call, 0 B/op.
     */
    REDEYE_OR_ELSE(RedeyeOrElse::new),
    /**
     * {@link #REDEYE} with a {@code RedeyeMetrics} binder (redeye-micrometer, its defaults: sampled call
     * timing) bound to a {@code SimpleMeterRegistry}: what metrics cost the healthy path. The target: 0 B/op
     * and within 10 % of {@link #REDEYE}.
     */
    REDEYE_MICROMETER(() -> new Redeye(true)),
    /**
     * redeye's sliding-window strategy in local mode, a count window at Resilience4j's defaults (100 outcomes,
     * 50 %, minimum 100 calls): compared with {@link #RESILIENCE4J}, whose default window is that one.
     */
    REDEYE_COUNT_WINDOW(() -> new Redeye(b -> b.slidingWindow(SlidingWindowType.COUNT_BASED, 100))),
    /**
     * redeye's own breaker configured as the Resilience4j adapter maps Resilience4j's default configuration:
     * {@link #REDEYE_COUNT_WINDOW} with slow calls of 60 s and more counted (at a 100 % rate), so every call is
     * watched for slowness while it runs.
     */
    REDEYE_R4J_DEFAULTS(() -> new Redeye(b -> b.slidingWindow(SlidingWindowType.COUNT_BASED, 100)
            .slowCallDurationThreshold(Duration.ofSeconds(60)).slowCallRateThreshold(100))),
    /** As {@link #REDEYE_COUNT_WINDOW} with a time window of 100 s: compared with {@link #RESILIENCE4J_TIME_WINDOW}. */
    REDEYE_TIME_WINDOW(() -> new Redeye(b -> b.slidingWindow(SlidingWindowType.TIME_BASED, 100))),
    /** Resilience4j 2.4.0 {@code CircuitBreaker}, default configuration (a count window of 100 outcomes). */
    RESILIENCE4J(() -> new Resilience4j(SlidingWindowType.COUNT_BASED)),
    /** Resilience4j 2.4.0 {@code CircuitBreaker}, default configuration but a time window of 100 s. */
    RESILIENCE4J_TIME_WINDOW(() -> new Resilience4j(SlidingWindowType.TIME_BASED)),
    /**
     * Resilience4j's {@code CircuitBreaker} interface implemented over redeye ({@code redeye-resilience4j}) in local
     * mode, Resilience4j's default configuration (which it maps to {@link #REDEYE_R4J_DEFAULTS}), called as
     * {@link #RESILIENCE4J} is: a supplier decorated once with {@code CircuitBreaker.decorateSupplier}. The
     * target: within 1.5x redeye's own, below {@link #RESILIENCE4J}, 0 B/op.
     */
    RESILIENCE4J_OVER_REDEYE(Resilience4jOverRedeye::new),
    /** Failsafe 3.3.2 {@code CircuitBreaker}, default configuration, through one {@code FailsafeExecutor}. */
    FAILSAFE(FailsafeBreaker::new);

    /** The open period every tripped breaker gets: long enough that no benchmark sees it elapse. */
    static final Duration OPEN_FOR = Duration.ofHours(1);
    /** The one operation name the redeye adapter uses. */
    static final String OPERATION = "bench";

    private final Supplier<BreakerAdapter> factory;

    BreakerType(Supplier<BreakerAdapter> factory) {
        this.factory = factory;
    }

    /**
     * A new, closed breaker of this type with its own state. Cheap (no threads, no I/O).
     *
     * @return an adapter the caller closes
     */
    public BreakerAdapter create() {
        return factory.get();
    }

    /** The value the benchmark's trivial call returns; a field, not a constant, so the JIT cannot fold it. */
    static final class Payload {
        Object value = new Object();
    }

    private static final class Direct implements BreakerAdapter {
        private final Payload payload = new Payload();
        private final Supplier<Object> call = () -> payload.value;

        @Override
        public Object call() {
            return call.get();
        }

        @Override
        public void trip() {
            throw new UnsupportedOperationException("DIRECT has no breaker to trip");
        }

        @Override
        public void close() {
        }
    }

    private static class Redeye implements BreakerAdapter {
        private final Payload payload = new Payload();
        final CheckedSupplier<Object, RuntimeException> call = () -> payload.value;
        final CircuitBreaker breaker;
        private final RedeyeMetrics metrics;

        Redeye(UnaryOperator<CircuitBreakerBuilder> options) {
            breaker = options.apply(CircuitBreaker.builder().resetTimeout(OPEN_FOR)).build();
            metrics = null;
        }

        Redeye(boolean withMetrics) {
            breaker = CircuitBreaker.builder().resetTimeout(OPEN_FOR).build();
            metrics = withMetrics ? RedeyeMetrics.of(breaker) : null;
            if (metrics != null) {
                metrics.bindTo(new SimpleMeterRegistry());
            }
        }

        @Override
        public Object call() {
            try {
                return breaker.execute(OPERATION, call);
            } catch (CircuitOpenException e) {
                return e;
            }
        }

        @Override
        public void trip() {
            recordThresholdFailures();
            requireRejected(call(), CircuitOpenException.class, this);
        }

        /** Records as many failures as open the breaker. */
        final void recordThresholdFailures() {
            int failures = breaker.config().strategy() == Strategy.SLIDING_WINDOW
                    ? breaker.config().policy().windowMinimumCalls() : breaker.config().failureThreshold();
            for (int i = 0; i < failures; i++) {
                breaker.recordFailure(OPERATION);
            }
        }

        @Override
        public void close() {
            if (metrics != null) {
                metrics.close();
            }
            breaker.close();
        }
    }

    /** {@link Redeye} through {@code executeOrElse}: a rejected call returns {@link #fallback}'s value. */
    private static final class RedeyeOrElse extends Redeye {
        /** What a rejected call returns: a field, so the JIT cannot fold it. */
        private final Payload fallback = new Payload();

        RedeyeOrElse() {
            super(false);
        }

        @Override
        public Object call() {
            return breaker.executeOrElse(OPERATION, call, fallback.value);
        }

        @Override
        public void trip() {
            recordThresholdFailures();
            Object rejected = call();
            if (rejected != fallback.value || breaker.metrics(OPERATION).rejections() != 1) {
                throw new IllegalStateException("RedeyeOrElse did not reject after trip(): " + rejected);
            }
        }
    }

    /** Resilience4j's configuration in these benchmarks: its defaults, the long open period, no stack traces. */
    private static CircuitBreakerConfig.Builder resilience4jConfig() {
        return CircuitBreakerConfig.custom().waitDurationInOpenState(OPEN_FOR).writableStackTraceEnabled(false);
    }

    /** A Resilience4j {@code CircuitBreaker} called through a supplier decorated once. */
    private static class Resilience4j implements BreakerAdapter {
        private final Payload payload = new Payload();
        final io.github.resilience4j.circuitbreaker.CircuitBreaker breaker;
        private final Supplier<Object> call;

        Resilience4j(SlidingWindowType window) {
            this(io.github.resilience4j.circuitbreaker.CircuitBreaker.of("bench", resilience4jConfig()
                    .slidingWindowType(window == SlidingWindowType.COUNT_BASED
                            ? CircuitBreakerConfig.SlidingWindowType.COUNT_BASED
                            : CircuitBreakerConfig.SlidingWindowType.TIME_BASED)
                    .build()));
        }

        Resilience4j(io.github.resilience4j.circuitbreaker.CircuitBreaker breaker) {
            this.breaker = breaker;
            call = io.github.resilience4j.circuitbreaker.CircuitBreaker.decorateSupplier(breaker, () -> payload.value);
        }

        @Override
        public Object call() {
            try {
                return call.get();
            } catch (CallNotPermittedException e) {
                return e;
            }
        }

        @Override
        public void trip() {
            breaker.transitionToOpenState();
            requireRejected(call(), CallNotPermittedException.class, this);
        }

        @Override
        public void close() {
        }
    }

    /** {@link Resilience4j} with the adapter over redeye, in local mode, as the breaker. */
    private static final class Resilience4jOverRedeye extends Resilience4j {
        private final Resilience4jBreakers breakers;

        Resilience4jOverRedeye() {
            this(Resilience4jBreakers.local());
        }

        private Resilience4jOverRedeye(Resilience4jBreakers breakers) {
            super(breakers.circuitBreaker(OPERATION, resilience4jConfig().build()));
            this.breakers = breakers;
        }

        /** The adapter opens for good only (transitionToOpenState is not supported over redeye). */
        @Override
        public void trip() {
            breaker.transitionToForcedOpenState();
            requireRejected(call(), CallNotPermittedException.class, this);
        }

        @Override
        public void close() {
            breakers.close();
        }
    }

    private static final class FailsafeBreaker implements BreakerAdapter {
        private final Payload payload = new Payload();
        private final dev.failsafe.CircuitBreaker<Object> breaker =
                dev.failsafe.CircuitBreaker.builder().withDelay(OPEN_FOR).build();
        private final FailsafeExecutor<Object> executor = Failsafe.with(breaker);
        private final dev.failsafe.function.CheckedSupplier<Object> call = () -> payload.value;

        @Override
        public Object call() {
            try {
                return executor.get(call);
            } catch (CircuitBreakerOpenException e) {
                return e;
            }
        }

        @Override
        public void trip() {
            breaker.open();
            requireRejected(call(), CircuitBreakerOpenException.class, this);
        }

        @Override
        public void close() {
        }
    }

    private static void requireRejected(Object result, Class<?> rejection, BreakerAdapter adapter) {
        if (!rejection.isInstance(result)) {
            throw new IllegalStateException(adapter.getClass().getSimpleName() + " did not reject after trip(): "
                    + result);
        }
    }
}
