package dev.redeye.resilience4j;

import static dev.redeye.resilience4j.TestStores.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.tck.MutableClock;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * Resilience4j's Reactor operator ({@link CircuitBreakerOperator}, resilience4j-reactor) over the adapter: it
 * takes a permission when a Mono or Flux is subscribed, and completes it from the signal that ends the
 * subscription, often on another scheduler's thread than the one that subscribed. Local mode on a virtual clock,
 * and two adapters over one shared store (in-memory, Redis) for the fleet.
 */
class ReactorOperatorTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    /** The longest a StepVerifier or a block waits for a signal; no assertion is about time. */
    private static final Duration BOUND = Duration.ofSeconds(30);

    private final MutableClock clock = new MutableClock(1_700_000_000_000L);
    private final Resilience4jBreakers breakers = Resilience4jBreakers.builder()
            .redeyeOptions(b -> b.clock(clock).ticker(clock))
            .build();

    @AfterEach
    void close() {
        breakers.close();
    }

    /** Count window of 10, rates from 4 calls, 50 % opens, a 10 s wait, 1 call in half-open. */
    private static CircuitBreakerConfig.Builder config() {
        return CircuitBreakerConfig.custom()
                .slidingWindow(10, 4, SlidingWindowType.COUNT_BASED)
                .failureRateThreshold(50)
                .waitDurationInOpenState(WAIT)
                .permittedNumberOfCallsInHalfOpenState(1);
    }

    private RedeyeBackedCircuitBreaker breaker(CircuitBreakerConfig.Builder config) {
        return breakers.circuitBreaker("backend", config.build());
    }

    private static void failMono(CircuitBreaker cb) {
        StepVerifier.create(Mono.<String>error(new IOException("down"))
                        .transformDeferred(CircuitBreakerOperator.of(cb)))
                .expectError(IOException.class).verify(BOUND);
    }

    /** Fails calls until the breaker opens (at most 4: the window's minimum), then waits out the open state. */
    private void openAndWait(RedeyeBackedCircuitBreaker cb) {
        for (int i = 0; i < 4 && cb.getState() != State.OPEN; i++) {
            failMono(cb);
        }
        assertEquals(State.OPEN, cb.getState());
        clock.advance(WAIT);
        assertEquals(State.HALF_OPEN, cb.getState());
    }

    @Test
    void aMonosValueIsASuccessAndItsErrorAFailure() {
        RedeyeBackedCircuitBreaker cb = breaker(config());
        StepVerifier.create(Mono.just("ok").transformDeferred(CircuitBreakerOperator.of(cb)))
                .expectNext("ok").verifyComplete();
        failMono(cb);
        StepVerifier.create(Mono.<String>empty().transformDeferred(CircuitBreakerOperator.of(cb)))
                .verifyComplete();
        assertEquals(3, cb.getMetrics().getNumberOfBufferedCalls());
        assertEquals(1, cb.getMetrics().getNumberOfFailedCalls());
        assertEquals(2, cb.getMetrics().getNumberOfSuccessfulCalls(), "a value, and an empty completion");
        assertEquals(0, cb.outstandingPermits());
    }

    @Test
    void aFluxIsOneCallWhateverItEmits() {
        RedeyeBackedCircuitBreaker cb = breaker(config());
        StepVerifier.create(Flux.range(1, 5).transformDeferred(CircuitBreakerOperator.of(cb)))
                .expectNext(1, 2, 3, 4, 5).verifyComplete();
        StepVerifier.create(Flux.concat(Flux.just(1, 2), Flux.error(new IOException("down")))
                        .transformDeferred(CircuitBreakerOperator.of(cb)))
                .expectNext(1, 2).expectError(IOException.class).verify(BOUND);
        assertEquals(2, cb.getMetrics().getNumberOfBufferedCalls());
        assertEquals(1, cb.getMetrics().getNumberOfFailedCalls());
        assertEquals(0, cb.outstandingPermits());
    }

    @Test
    void failuresThroughTheOperatorOpenTheBreakerAndARejectionNeverSubscribesUpstream() {
        RedeyeBackedCircuitBreaker cb = breaker(config());
        for (int i = 0; i < 4; i++) {
            failMono(cb);
        }
        assertEquals(State.OPEN, cb.getState());
        AtomicInteger subscribed = new AtomicInteger();
        Mono<String> mono = Mono.defer(() -> {
            subscribed.incrementAndGet();
            return Mono.just("never");
        });
        StepVerifier.create(mono.transformDeferred(CircuitBreakerOperator.of(cb)))
                .expectError(CallNotPermittedException.class).verify(BOUND);
        Flux<Integer> flux = Flux.defer(() -> {
            subscribed.incrementAndGet();
            return Flux.just(1);
        });
        StepVerifier.create(flux.transformDeferred(CircuitBreakerOperator.of(cb)))
                .expectError(CallNotPermittedException.class).verify(BOUND);
        assertEquals(0, subscribed.get(), "the upstream was never subscribed");
        assertEquals(2, cb.getMetrics().getNumberOfNotPermittedCalls());
        assertEquals(4, cb.getMetrics().getNumberOfBufferedCalls());
        assertEquals(0, cb.outstandingPermits());
    }

    @Test
    void aSubscriptionCancelledBeforeAnySignalReleasesItsPermitAndRecordsNothing() {
        RedeyeBackedCircuitBreaker cb = breaker(config());
        StepVerifier.create(Mono.never().transformDeferred(CircuitBreakerOperator.of(cb)))
                .expectSubscription().thenCancel().verify(BOUND);
        StepVerifier.create(Flux.never().transformDeferred(CircuitBreakerOperator.of(cb)))
                .expectSubscription().thenCancel().verify(BOUND);
        assertEquals(0, cb.outstandingPermits());
        assertEquals(0, cb.getMetrics().getNumberOfBufferedCalls());

        // In half-open the one permitted call is the trial: cancelled, it goes back and the next call has it.
        openAndWait(cb);
        StepVerifier.create(Mono.never().transformDeferred(CircuitBreakerOperator.of(cb)))
                .expectSubscription().thenCancel().verify(BOUND);
        assertEquals(State.HALF_OPEN, cb.getState(), "the cancel recorded nothing");
        StepVerifier.create(Mono.just("ok").transformDeferred(CircuitBreakerOperator.of(cb)))
                .expectNext("ok").verifyComplete();
        assertEquals(State.CLOSED, cb.getState());
        assertEquals(0, cb.outstandingPermits());
    }

    @Test
    void aFluxCancelledAfterAValueIsASuccess() {
        // The operator's own rule (resilience4j-reactor): a cancel after an emitted value is a success.
        RedeyeBackedCircuitBreaker cb = breaker(config());
        StepVerifier.create(Flux.range(1, 100).transformDeferred(CircuitBreakerOperator.of(cb)).take(2))
                .expectNext(1, 2).verifyComplete();
        assertEquals(1, cb.getMetrics().getNumberOfSuccessfulCalls());
        assertEquals(0, cb.getMetrics().getNumberOfFailedCalls());
        assertEquals(0, cb.outstandingPermits());
    }

    @Test
    void aSignalOnAnotherSchedulersThreadCompletesThePermitItsSubscriptionAcquired() {
        RedeyeBackedCircuitBreaker cb = breaker(config());
        String testThread = Thread.currentThread().getName();

        // Acquired here (the subscribing thread), completed on a boundedElastic thread: the half-open trial
        // (the only call permitted) succeeds there and closes the breaker.
        openAndWait(cb);
        Mono<String> onElastic = Mono.fromCallable(() -> Thread.currentThread().getName())
                .subscribeOn(Schedulers.boundedElastic());
        String completedOn = onElastic.transformDeferred(CircuitBreakerOperator.of(cb)).block(BOUND);
        assertNotEquals(testThread, completedOn);
        assertEquals(State.CLOSED, cb.getState(), "the trial's success, signalled on " + completedOn);
        assertEquals(0, cb.outstandingPermits());

        // publishOn: the value is signalled to the operator on a boundedElastic thread
        assertEquals("ok", Mono.just("ok").publishOn(Schedulers.boundedElastic())
                .transformDeferred(CircuitBreakerOperator.of(cb)).block(BOUND));
        assertEquals(0, cb.outstandingPermits());

        // Acquired on a boundedElastic thread (subscribeOn below the operator), failed on a parallel thread
        // (the delay's): the half-open trial fails there and reopens the breaker.
        openAgain(cb);
        AtomicReference<String> acquiredOn = new AtomicReference<>();
        AtomicReference<String> failedOn = new AtomicReference<>();
        Mono<String> failing = Mono.defer(() -> {
            acquiredOn.set(Thread.currentThread().getName()); // the operator subscribes right after acquiring
            return Mono.delay(Duration.ofMillis(20), Schedulers.parallel()).then(Mono.<String>defer(() -> {
                failedOn.set(Thread.currentThread().getName());
                return Mono.error(new IOException("down"));
            }));
        });
        StepVerifier.create(failing.transformDeferred(CircuitBreakerOperator.of(cb))
                        .subscribeOn(Schedulers.boundedElastic()))
                .expectError(IOException.class).verify(BOUND);
        assertNotNull(acquiredOn.get());
        assertNotEquals(acquiredOn.get(), failedOn.get());
        assertNotEquals(testThread, acquiredOn.get());
        assertEquals(State.OPEN, cb.getState(), "the trial failed on " + failedOn.get());
        assertFalse(cb.tryAcquirePermission());
        assertEquals(0, cb.outstandingPermits());
    }

    /** Closed (the trial of {@link #openAndWait} succeeded): fails calls until it opens, and waits out the open state. */
    private void openAgain(RedeyeBackedCircuitBreaker cb) {
        assertEquals(State.CLOSED, cb.getState());
        openAndWait(cb);
    }

    @Test
    void manyConcurrentMonosOnParallelSchedulersLeaveNoPermitOutstandingAndRecordEveryFailure() {
        // A window that never reaches its minimum: every call is admitted and recorded, none opens the breaker.
        RedeyeBackedCircuitBreaker cb = breaker(config().slidingWindow(1_000, 1_000, SlidingWindowType.COUNT_BASED));
        int calls = 600;
        AtomicInteger failuresSent = new AtomicInteger();
        List<Integer> results = Flux.range(0, calls)
                .flatMap(i -> Mono.delay(Duration.ofMillis(i % 3), Schedulers.parallel())
                        .then(Mono.fromCallable(() -> {
                            if (i % 7 == 0) {
                                failuresSent.incrementAndGet();
                                throw new IOException("down " + i);
                            }
                            return i;
                        }))
                        .publishOn(i % 2 == 0 ? Schedulers.boundedElastic() : Schedulers.parallel())
                        .transformDeferred(CircuitBreakerOperator.of(cb))
                        .subscribeOn(Schedulers.parallel())
                        .onErrorResume(IOException.class, e -> Mono.just(-1)), 64)
                .collectList()
                .block(BOUND);
        assertNotNull(results);
        assertEquals(calls, results.size());
        long failed = results.stream().filter(r -> r == -1).count();
        assertEquals(failuresSent.get(), failed);
        assertTrue(failed > 0);
        assertEquals(0, cb.outstandingPermits(), "every permit completed");
        assertEquals(calls, cb.getMetrics().getNumberOfBufferedCalls(), "each call recorded once");
        assertEquals(failuresSent.get(), cb.getMetrics().getNumberOfFailedCalls());
        assertEquals(State.CLOSED, cb.getState());
    }

    @ParameterizedTest
    @EnumSource(TestStores.Kind.class)
    void failuresThroughTheOperatorOnOneInstanceOpenTheOther(TestStores.Kind kind) throws Exception {
        TestStores.Location store = TestStores.fresh(kind);
        try (Resilience4jBreakers instanceA = Resilience4jBreakers.builder().store(store.open())
                     .redeyeOptions(b -> b.clock(clock).ticker(clock)).build();
             Resilience4jBreakers instanceB = Resilience4jBreakers.builder().store(store.open())
                     .redeyeOptions(b -> b.clock(clock).ticker(clock)).build()) {
            RedeyeBackedCircuitBreaker a = instanceA.circuitBreaker("inventory", config().build());
            RedeyeBackedCircuitBreaker b = instanceB.circuitBreaker("inventory", config().build());
            AtomicInteger reachedB = new AtomicInteger();
            Mono<String> onB = Mono.fromCallable(() -> {
                reachedB.incrementAndGet();
                return "ok";
            });
            StepVerifier.create(onB.transformDeferred(CircuitBreakerOperator.of(b))).expectNext("ok").verifyComplete();
            for (int i = 0; i < 3; i++) {
                failMono(a); // the shared window: 1 success (b) and 3 failures (a), 75 %
            }
            assertEquals(State.OPEN, a.getState());
            StepVerifier.create(onB.transformDeferred(CircuitBreakerOperator.of(b)))
                    .expectError(CallNotPermittedException.class).verify(BOUND);
            assertEquals(1, reachedB.get(), "B's rejected subscription never reached its dependency");
            eventually(() -> b.getState() == State.OPEN, "B's own view follows the store");
            assertEquals(0, a.outstandingPermits());
            assertEquals(0, b.outstandingPermits());
        } finally {
            store.cleanUp();
        }
    }
}
