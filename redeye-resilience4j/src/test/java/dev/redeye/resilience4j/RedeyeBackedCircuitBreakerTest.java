package dev.redeye.resilience4j;

import static dev.redeye.resilience4j.TestCalls.fail;
import static dev.redeye.resilience4j.TestCalls.succeed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.StoreErrorPolicy;
import dev.redeye.Stores;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import dev.redeye.tck.MutableClock;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.ResultRecordedAsFailureException;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnErrorEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnStateTransitionEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The adapter in local mode, on a virtual clock and ticker: what the documented-behaviour contract
 * ({@link DocumentedBehaviourContract}, run in every mode) does not cover: leaving DISABLED and METRICS_ONLY by
 * transitionToClosedState, the exception and result predicates in detail, completion stages, a released trial,
 * interrupts, store errors under REJECT, a throwing consumer, outcomes without a permit, and the factory's reuse
 * of a name.
 */
class RedeyeBackedCircuitBreakerTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final MutableClock clock = new MutableClock(1_700_000_000_000L);
    private final Resilience4jBreakers breakers = Resilience4jBreakers.builder()
            .redeyeOptions(b -> b.clock(clock).ticker(clock))
            .build();
    private final List<CircuitBreakerEvent> events = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() {
        breakers.close();
    }

    /** Count window of 10, 4 calls before a rate counts, 50 % opens, 2 calls in half-open. */
    private static CircuitBreakerConfig.Builder config() {
        return CircuitBreakerConfig.custom()
                .slidingWindow(10, 4, CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .failureRateThreshold(50)
                .waitDurationInOpenState(WAIT)
                .permittedNumberOfCallsInHalfOpenState(2);
    }

    private CircuitBreaker breaker(CircuitBreakerConfig config) {
        CircuitBreaker cb = breakers.circuitBreaker("backend", config);
        cb.getEventPublisher().onEvent(events::add);
        return cb;
    }

    private List<String> transitions() {
        return events.stream().filter(e -> e instanceof CircuitBreakerOnStateTransitionEvent)
                .map(e -> ((CircuitBreakerOnStateTransitionEvent) e).getStateTransition().toString())
                .collect(Collectors.toList());
    }

    private long count(CircuitBreakerEvent.Type type) {
        return events.stream().filter(e -> e.getEventType() == type).count();
    }

    @Test
    void disabledAdmitsEveryCallAndRecordsNothing() {
        CircuitBreaker cb = breaker(config().build());
        cb.transitionToDisabledState();
        assertEquals(State.DISABLED, cb.getState());
        for (int i = 0; i < 10; i++) {
            fail(cb);
        }
        assertEquals(State.DISABLED, cb.getState());
        assertEquals(0, cb.getMetrics().getNumberOfBufferedCalls());
        assertEquals(0, count(CircuitBreakerEvent.Type.ERROR), "DISABLED publishes no call events");
        cb.transitionToClosedState();
        assertEquals(State.CLOSED, cb.getState());
        assertEquals(List.of("State transition from CLOSED to DISABLED",
                "State transition from DISABLED to CLOSED"), transitions());
    }

    @Test
    void initialStateMetricsOnlyIsTheBreakersMode() {
        CircuitBreaker cb = breaker(config().initialState(State.METRICS_ONLY).build());
        assertEquals(State.METRICS_ONLY, cb.getState());
        for (int i = 0; i < 8; i++) {
            fail(cb);
        }
        assertEquals(State.METRICS_ONLY, cb.getState());
        cb.transitionToClosedState();
        assertEquals(State.CLOSED, cb.getState());
    }

    @Test
    void eventsForSuccessErrorIgnoredErrorAndNotPermitted() {
        CircuitBreaker cb = breaker(config().ignoreExceptions(IllegalArgumentException.class).build());
        List<CircuitBreakerEvent> errors = new CopyOnWriteArrayList<>();
        cb.getEventPublisher().onError(errors::add);
        succeed(cb);
        fail(cb);
        assertThrows(IllegalArgumentException.class, () -> cb.executeSupplier(() -> {
            throw new IllegalArgumentException("ignored");
        }));
        assertEquals(1, count(CircuitBreakerEvent.Type.SUCCESS));
        assertEquals(1, count(CircuitBreakerEvent.Type.ERROR));
        assertEquals(1, count(CircuitBreakerEvent.Type.IGNORED_ERROR));
        assertEquals(1, errors.size());
        assertEquals(2, cb.getMetrics().getNumberOfBufferedCalls(), "an ignored error is not in the window");
        assertEquals("backend", errors.get(0).getCircuitBreakerName());
        assertInstanceOf(IllegalStateException.class, ((CircuitBreakerOnErrorEvent) errors.get(0)).getThrowable());
    }

    @Test
    void onlyRecordedExceptionsAreFailuresOthersAreSuccesses() {
        CircuitBreaker cb = breaker(config().recordExceptions(IOException.class).build());
        for (int i = 0; i < 4; i++) {
            fail(cb); // IllegalStateException: not recorded, so a success
        }
        assertEquals(State.CLOSED, cb.getState());
        assertEquals(0, cb.getMetrics().getNumberOfFailedCalls());
        assertEquals(4, cb.getMetrics().getNumberOfSuccessfulCalls());
        for (int i = 0; i < 4; i++) {
            assertThrows(UncheckedIOException.class, () -> cb.executeSupplier(() -> {
                throw new UncheckedIOException(new IOException("down"));
            }));
        }
        assertEquals(8, cb.getMetrics().getNumberOfSuccessfulCalls(), "UncheckedIOException is no IOException");
        assertThrows(IOException.class, () -> cb.executeCallable(() -> {
            throw new IOException("down");
        }));
        assertEquals(1, cb.getMetrics().getNumberOfFailedCalls());
    }

    @Test
    void recordResultPredicateMakesAResultAFailure() {
        CircuitBreaker cb = breaker(config().recordResult("bad"::equals).build());
        for (int i = 0; i < 4; i++) {
            assertEquals("bad", cb.executeSupplier(() -> "bad"));
        }
        assertEquals(State.OPEN, cb.getState());
        CircuitBreakerOnErrorEvent e = (CircuitBreakerOnErrorEvent) events.stream()
                .filter(x -> x.getEventType() == CircuitBreakerEvent.Type.ERROR).findFirst().orElseThrow();
        assertInstanceOf(ResultRecordedAsFailureException.class, e.getThrowable());
    }

    @Test
    void completionStagesCompletedOnAnotherThreadCompleteTheirPermits() throws Exception {
        CircuitBreaker cb = breaker(config().build());
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            for (int i = 0; i < 4; i++) {
                CompletionStage<String> stage = cb.executeCompletionStage(() -> CompletableFuture.supplyAsync(() -> {
                    throw new IllegalStateException("down");
                }, pool));
                CompletableFuture<String> f = stage.toCompletableFuture();
                assertThrows(Exception.class, () -> f.get(5, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(State.OPEN, cb.getState());
        assertEquals(0, ((RedeyeBackedCircuitBreaker) cb).outstandingPermits());
        CompletionStage<String> rejected = cb.executeCompletionStage(() -> CompletableFuture.completedFuture("x"));
        Exception e = assertThrows(Exception.class, () -> rejected.toCompletableFuture().get(5, TimeUnit.SECONDS));
        assertInstanceOf(CallNotPermittedException.class, e.getCause());
    }

    @Test
    void aReleasedPermitInHalfOpenGivesTheTrialBack() {
        CircuitBreaker cb = breaker(config().permittedNumberOfCallsInHalfOpenState(1).build());
        for (int i = 0; i < 4; i++) {
            fail(cb);
        }
        clock.advance(WAIT);
        assertTrue(cb.tryAcquirePermission());
        cb.releasePermission(); // the call was not made: nothing recorded, the trial is free again
        assertEquals(State.HALF_OPEN, cb.getState());
        succeed(cb);
        assertEquals(State.CLOSED, cb.getState());
    }

    @Test
    void anInterruptIsNotRecordedAsAFailure() {
        CircuitBreaker cb = breaker(config().build());
        for (int i = 0; i < 4; i++) {
            assertTrue(cb.tryAcquirePermission());
            cb.onError(1, TimeUnit.MILLISECONDS, new InterruptedException("shutting down"));
        }
        assertEquals(State.CLOSED, cb.getState(), "redeye does not count interrupts (a deviation, see the README)");
        assertEquals(0, cb.getMetrics().getNumberOfBufferedCalls());
        assertEquals(4, count(CircuitBreakerEvent.Type.ERROR), "the error events are still published");
        Thread.interrupted(); // redeye restores nothing here, but keep the test thread clean either way
    }

    @Test
    void aStoreErrorUnderRejectIsACallNotPermittedExceptionAndReachesOnStoreError() {
        AtomicBoolean down = new AtomicBoolean();
        List<Throwable> storeErrors = new CopyOnWriteArrayList<>();
        Store failing = new ForwardingStore(Stores.open("memory:")) {
            @Override
            public Optional<BreakerState> get(String key) {
                if (down.get()) {
                    throw new StoreException("store down");
                }
                return super.get(key);
            }

            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                if (down.get()) {
                    throw new StoreException("store down");
                }
                return super.apply(key, operation, policy, now);
            }
        };
        try (Resilience4jBreakers rejecting = Resilience4jBreakers.builder().store(failing)
                .redeyeOptions(b -> b.storeErrorPolicy(StoreErrorPolicy.REJECT).clock(clock).ticker(clock)
                        .onStoreError((op, error) -> storeErrors.add(error)))
                .build()) {
            CircuitBreaker cb = rejecting.circuitBreaker("backend", config().build());
            succeed(cb);
            down.set(true);
            assertFalse(cb.tryAcquirePermission());
            assertThrows(CallNotPermittedException.class, cb::acquirePermission);
            assertEquals(2, storeErrors.size());
            assertInstanceOf(StoreException.class, storeErrors.get(0));
        }
    }

    @Test
    void aConsumerThatThrowsNeitherReachesTheCallerNorCompletesAnotherPermit() {
        CircuitBreaker cb = breaker(config().build());
        cb.getEventPublisher().onSuccess(e -> {
            throw new IllegalStateException("a broken consumer");
        });
        assertTrue(cb.tryAcquirePermission()); // another call, in flight
        assertEquals("ok", cb.executeSupplier(() -> "ok"));
        assertEquals(1, ((RedeyeBackedCircuitBreaker) cb).outstandingPermits(), "the other call's permit is left");
        assertEquals(0, cb.getMetrics().getNumberOfFailedCalls());
        cb.releasePermission();
    }

    @Test
    void anOutcomeWithoutAPermitIsRecordedDirectly() {
        CircuitBreaker cb = breaker(config().build());
        for (int i = 0; i < 4; i++) {
            cb.onError(0, TimeUnit.MILLISECONDS, new IllegalStateException("seen elsewhere"));
        }
        assertEquals(State.OPEN, cb.getState());
    }

    @Test
    void aNameAskedForAgainIsTheSameBreaker() {
        CircuitBreaker first = breakers.circuitBreaker("backend", config().build());
        assertTrue(first == breakers.circuitBreaker("backend", CircuitBreakerConfig.ofDefaults()));
        assertEquals("backend", first.getName());
    }

    @Test
    void timestampsFollowTheConfigsFunctionAndUnit() {
        CircuitBreaker byDefault = breaker(config().build());
        assertEquals(TimeUnit.NANOSECONDS, byDefault.getTimestampUnit());
        long before = System.nanoTime();
        long t = byDefault.getCurrentTimestamp();
        assertTrue(t >= before && t <= System.nanoTime(), "System.nanoTime() by default");
        CircuitBreaker custom = breakers.circuitBreaker("custom-timestamps", config()
                .currentTimestampFunction(clock -> 42L, TimeUnit.MILLISECONDS).build());
        assertEquals(42L, custom.getCurrentTimestamp());
        assertEquals(TimeUnit.MILLISECONDS, custom.getTimestampUnit());
    }
}
