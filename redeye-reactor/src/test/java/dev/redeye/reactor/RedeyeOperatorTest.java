package dev.redeye.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.Metrics;
import dev.redeye.Permit;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.tck.MutableClock;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.publisher.TestPublisher;

/** What each Reactor signal does to the breaker, in local mode, with StepVerifier. */
class RedeyeOperatorTest {
    private static final String OP = "pricing";
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final MutableClock clock = new MutableClock(1_700_000_000_000L);
    private final CircuitBreaker breaker = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0)
            .failureThreshold(2).resetTimeout(Duration.ofSeconds(10)).trialTimeout(Duration.ofSeconds(5))
            .recordResult(v -> "bad".equals(v)).build();
    /** Subscriptions that reached the source: a rejected one never does. */
    private final AtomicInteger reached = new AtomicInteger();

    @AfterEach
    void close() {
        breaker.close();
    }

    private <T> RedeyeOperator<T> op() {
        return RedeyeOperator.of(breaker, OP);
    }

    private Mono<String> failing() {
        return Mono.<String>error(new IOException("down")).doOnSubscribe(s -> reached.incrementAndGet());
    }

    private Mono<String> value(String v) {
        return Mono.just(v).doOnSubscribe(s -> reached.incrementAndGet());
    }

    private Metrics metrics() {
        return breaker.metrics(OP);
    }

    private void trip() {
        for (int i = 0; i < 2; i++) {
            StepVerifier.create(failing().transformDeferred(op())).expectError(IOException.class).verify(WAIT);
        }
        assertEquals(BreakerStatus.OPEN, breaker.status(OP));
    }

    /**
     * Monos that never emit, under a sliding window with a slow-call threshold, are counted as slow while they
     * are still subscribed: the breaker opens before any of them ends, and the next subscription is rejected.
     */
    @Test
    void monosThatHangOpenASlidingWindowBeforeTheyEnd() throws Exception {
        try (CircuitBreaker windowed = CircuitBreaker.builder()
                .slidingWindow(dev.redeye.api.SlidingWindowType.COUNT_BASED, 10).minimumNumberOfCalls(3)
                .slowCallDurationThreshold(Duration.ofMillis(30)).build()) {
            java.util.List<reactor.core.Disposable> hanging = new java.util.ArrayList<>();
            for (int i = 0; i < 3; i++) {
                hanging.add(Mono.never().transformDeferred(RedeyeOperator.of(windowed, OP)).subscribe());
            }
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (windowed.status(OP) != BreakerStatus.OPEN && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(BreakerStatus.OPEN, windowed.status(OP));
            assertEquals(3, windowed.state(OP).window().slowCalls());
            StepVerifier.create(value("42").transformDeferred(RedeyeOperator.of(windowed, OP)))
                    .expectError(CircuitOpenException.class).verify(WAIT);
            hanging.forEach(reactor.core.Disposable::dispose);
        }
    }

    @Test
    void aMonoValueIsASuccessAndAnErrorAFailure() {
        StepVerifier.create(value("42").transformDeferred(op())).expectNext("42").verifyComplete();
        StepVerifier.create(failing().transformDeferred(op())).expectError(IOException.class).verify(WAIT);
        Metrics m = metrics();
        assertEquals(2, m.calls());
        assertEquals(1, m.successes());
        assertEquals(1, m.failures());
    }

    @Test
    void anOpenBreakerRejectsAtSubscribeWithoutSubscribingTheSource() {
        trip();
        int before = reached.get();
        StepVerifier.create(value("42").transformDeferred(op()))
                .expectErrorSatisfies(e -> {
                    CircuitOpenException open = (CircuitOpenException) e;
                    assertEquals(OP, open.operation());
                    assertEquals(Duration.ofSeconds(10), open.retryAfter().orElseThrow());
                })
                .verify(WAIT);
        assertEquals(before, reached.get(), "the rejected subscription reached the source");
        assertEquals(1, metrics().rejections());
    }

    @Test
    void admissionHappensAtEachSubscriptionNotAtAssembly() {
        Mono<String> assembledWhileClosed = value("42").transform(op());
        trip();
        StepVerifier.create(assembledWhileClosed).expectError(CircuitOpenException.class).verify(WAIT);
        Mono<String> assembledWhileOpen = value("42").transformDeferred(op());
        breaker.reset(OP);
        StepVerifier.create(assembledWhileOpen).expectNext("42").verifyComplete();
    }

    @Test
    void eachResubscriptionAsksAgain() {
        StepVerifier.create(failing().transformDeferred(op()).retry(2))
                .expectError(CircuitOpenException.class).verify(WAIT);
        assertEquals(2, reached.get(), "two failures opened it; the third subscription was rejected");
        assertEquals(2, metrics().failures());
        assertEquals(1, metrics().rejections());
    }

    @Test
    void aMonoValueGoesThroughRecordResultAndAnEmptyMonoIsASuccess() {
        StepVerifier.create(value("bad").transformDeferred(op())).expectNext("bad").verifyComplete();
        assertEquals(1, metrics().failures(), "recordResult says \"bad\" is a failure");
        StepVerifier.create(Mono.<String>empty().transformDeferred(op())).verifyComplete();
        assertEquals(1, metrics().successes());
        assertEquals(BreakerStatus.CLOSED, breaker.status(OP), "the success cleared the failure");
    }

    @Test
    void aCancelBeforeTheValueRecordsNothingAndGivesATrialBack() {
        trip();
        clock.advance(Duration.ofSeconds(10));
        StepVerifier.create(Mono.<String>never().transformDeferred(op()))
                .expectSubscription()
                .thenCancel()
                .verify(WAIT);
        Metrics m = metrics();
        assertEquals(2, m.failures(), "the cancel is no failure");
        assertEquals(0, m.successes(), "nor a success");
        assertEquals(1, m.trials(), "the cancelled subscription held the trial");
        Permit next = breaker.tryAcquire(OP);
        assertTrue(next.isTrial(), "the trial claim came back at once, not after trialTimeout: " + next);
        assertTrue(next.onSuccess());
        assertEquals(BreakerStatus.CLOSED, breaker.status(OP));
    }

    @Test
    void aTimeoutBeforeTheOperatorIsAFailureOnVirtualTime() {
        StepVerifier.withVirtualTime(() -> Mono.<String>never().timeout(Duration.ofSeconds(2))
                        .transformDeferred(op()))
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(2))
                .expectError(TimeoutException.class)
                .verify(WAIT);
        assertEquals(1, metrics().failures());
    }

    @Test
    void aFluxCompletionIsOneSuccessAndAnErrorMidStreamAFailure() {
        StepVerifier.create(Flux.just("a", "bad", "c").transformDeferred(op()))
                .expectNext("a", "bad", "c").verifyComplete();
        assertEquals(1, metrics().successes(), "one call, and recordResult is not applied to elements");
        assertEquals(0, metrics().failures());
        StepVerifier.create(Flux.just("a").concatWith(Mono.error(new IOException("mid-stream")))
                        .transformDeferred(op()))
                .expectNext("a").expectError(IOException.class).verify(WAIT);
        assertEquals(1, metrics().failures());
    }

    @Test
    void aFluxCancelledAfterAnElementIsASuccessAndBeforeAnyNothing() {
        StepVerifier.create(Flux.just("a", "b", "c").transformDeferred(op()).take(1))
                .expectNext("a").verifyComplete();
        assertEquals(1, metrics().successes(), "take(1) cancelled after an element: the dependency answered");
        TestPublisher<String> silent = TestPublisher.create();
        StepVerifier.create(silent.flux().transformDeferred(op()))
                .expectSubscription()
                .thenCancel()
                .verify(WAIT);
        silent.assertCancelled();
        Metrics m = metrics();
        assertEquals(1, m.successes());
        assertEquals(0, m.failures());
        assertEquals(2, m.calls());
        assertEquals(1, m.ignored(), "released unused");
    }

    @Test
    void theFirstOutcomeWins() {
        TestPublisher<String> misbehaving = TestPublisher.createNoncompliant(TestPublisher.Violation.CLEANUP_ON_TERMINATE);
        StepVerifier.create(misbehaving.flux().transformDeferred(op()))
                .then(() -> misbehaving.next("a").complete().error(new IOException("after completion")))
                .expectNext("a").verifyComplete();
        assertEquals(1, metrics().successes());
        assertEquals(0, metrics().failures());
    }

    @Test
    void otherPublishersAreGuardedAsFlux() {
        RedeyeOperator<String> op = op();
        assertTrue(op.apply(Flux.just("x")) instanceof Flux);
        assertTrue(op.apply(Mono.just("x")) instanceof Mono);
        StepVerifier.create(op.apply(subscriber -> Flux.just("x").subscribe(subscriber)))
                .expectNext("x").verifyComplete();
        assertEquals(1, metrics().successes());
    }

    @Test
    void badArgumentsAreNamed() {
        assertEquals("breaker", assertThrows(NullPointerException.class,
                () -> RedeyeOperator.of(null, OP)).getMessage());
        assertEquals("operation", assertThrows(NullPointerException.class,
                () -> RedeyeOperator.of(breaker, null)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> RedeyeOperator.of(breaker, ""));
        assertFalse(op().toString().isEmpty());
    }
}
