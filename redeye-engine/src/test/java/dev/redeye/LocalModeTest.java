package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.Policy;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Transitions;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The engine in local mode, on a virtual clock, with jitter off unless a test is about jitter. */
class LocalModeTest extends BreakersOverInMemoryStore {
    private static final String OP = "payments";

    private CircuitBreakerBuilder builder() {
        return CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).resetTimeout(Duration.ofSeconds(10));
    }

    static String ok(CircuitBreaker b, String op) {
        return b.execute(op, () -> "ok");
    }

    static void failOnce(CircuitBreaker b, String op) {
        IOException boom = new IOException("boom");
        IOException thrown = assertThrows(IOException.class, () -> b.execute(op, () -> {
            throw boom;
        }));
        assertSame(boom, thrown);
    }

    static CircuitOpenException rejected(CircuitBreaker b, String op) {
        AtomicInteger ran = new AtomicInteger();
        CircuitOpenException e = assertThrows(CircuitOpenException.class, () -> b.execute(op, () -> {
            ran.incrementAndGet();
            return "ran";
        }));
        assertEquals(0, ran.get(), "a rejected call must not run");
        return e;
    }

    @Test
    void consecutiveFailuresOpenAtThresholdAndRejectWithoutRunningTheCall() {
        CircuitBreaker b = keep(builder().failureThreshold(3));
        failOnce(b, OP);
        failOnce(b, OP);
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
        assertEquals(2, b.state(OP).failures());
        failOnce(b, OP);
        assertEquals(BreakerStatus.OPEN, b.status(OP));
        CircuitOpenException e = rejected(b, OP);
        assertEquals(OP, e.operation());
        assertEquals(BreakerStatus.OPEN, e.status());
        assertEquals(Duration.ofSeconds(10), e.retryAfter().orElseThrow());
        clock.advance(Duration.ofSeconds(4));
        assertEquals(Duration.ofSeconds(6), rejected(b, OP).retryAfter().orElseThrow());
        assertEquals("ok", ok(b, "other"), "operations are independent");
    }

    @Test
    void successClearsSubThresholdFailures() {
        CircuitBreaker b = keep(builder().failureThreshold(3));
        failOnce(b, OP);
        failOnce(b, OP);
        long v = b.state(OP).version();
        ok(b, OP);
        assertEquals(0, b.state(OP).failures());
        assertEquals(v, b.state(OP).version(), "clearing failures is a write, not a transition (contract v2)");
        ok(b, OP);
        assertEquals(v, b.state(OP).version(), "a success with nothing to clear writes nothing");
        failOnce(b, OP);
        failOnce(b, OP);
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
    }

    @Test
    void maxGapBetweenFailuresRestartsTheCount() {
        CircuitBreaker b = keep(builder().failureThreshold(3).maxGapBetweenFailures(Duration.ofSeconds(1)));
        failOnce(b, OP);
        failOnce(b, OP);
        clock.advance(Duration.ofMillis(1001));
        failOnce(b, OP);
        assertEquals(1, b.state(OP).failures(), "a failure after the gap restarts the count");
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
        clock.advance(Duration.ofMillis(1000));
        failOnce(b, OP);
        failOnce(b, OP);
        assertEquals(BreakerStatus.OPEN, b.status(OP), "failures within the gap add up");
    }

    @Test
    void errorRateOpensOnFourFailuresInFiveAndMatchesTransitions() {
        CircuitBreaker b = keep(builder().strategy(Strategy.ERROR_RATE).errorRateThreshold(0.5).minimumCalls(10)
                .errorRateDecay(0.9).failureThreshold(100));
        Policy p = b.config().policy();
        BreakerState expected = BreakerState.INITIAL;
        boolean[] pattern = {false, false, false, false, true};
        int calls = 0;
        while (b.status(OP) == BreakerStatus.CLOSED) {
            boolean success = pattern[calls % 5];
            if (success) {
                ok(b, OP);
            } else {
                failOnce(b, OP);
            }
            StateChange ch = Transitions.recordOutcome(expected, success, p, clock.millis());
            expected = ch.state();
            calls++;
            assertEquals(expected, b.state(OP), "after call " + calls);
            assertTrue(calls < 50, "never opened");
        }
        assertTrue(calls >= 10, "must not open before minimumCalls, opened after " + calls);
        assertTrue(b.state(OP).errorRate() >= 0.5);
        rejected(b, OP);
    }

    @Test
    void errorRateDoesNotOpenBeforeMinimumCalls() {
        CircuitBreaker b = keep(builder().strategy(Strategy.ERROR_RATE).minimumCalls(10));
        for (int i = 0; i < 9; i++) {
            failOnce(b, OP);
        }
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
        assertEquals(9, b.state(OP).samples());
        failOnce(b, OP);
        assertEquals(BreakerStatus.OPEN, b.status(OP));
    }

    @Test
    void trialSuccessAfterResetWindowCloses() {
        CircuitBreaker b = keep(builder().failureThreshold(1));
        failOnce(b, OP);
        clock.advance(Duration.ofMillis(9_999));
        rejected(b, OP);
        clock.advanceMillis(1);
        assertEquals(BreakerStatus.HALF_OPEN, b.status(OP));
        assertEquals("ok", ok(b, OP));
        assertEquals(1, b.metrics(OP).trials());
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
        BreakerState s = b.state(OP);
        assertEquals(0, s.failures());
        assertEquals(0, s.openCount());
        ok(b, OP);
        assertEquals(1, b.metrics(OP).trials(), "a closed breaker runs no trials");
    }

    @Test
    void failedTrialsBackOffByTheMultiplierUpToTheCap() {
        CircuitBreaker b = keep(builder().failureThreshold(1).backoffMultiplier(2)
                .maxResetTimeout(Duration.ofSeconds(35)));
        failOnce(b, OP);
        long[] expectedWindows = {10_000, 20_000, 35_000, 35_000};
        for (int i = 0; i < expectedWindows.length; i++) {
            long window = expectedWindows[i];
            assertEquals(Duration.ofMillis(window), rejected(b, OP).retryAfter().orElseThrow(), "window " + i);
            clock.advanceMillis(window - 1);
            rejected(b, OP);
            clock.advanceMillis(1);
            failOnce(b, OP); // the trial fails: reopen
            assertEquals(i + 1, b.state(OP).openCount());
        }
        clock.advance(Duration.ofSeconds(35));
        ok(b, OP);
        assertEquals(0, b.state(OP).openCount(), "closing resets the backoff");
    }

    @Test
    void backoffStaysWithinJitterAndEachInstanceViewIsStable() {
        double jitter = 0.2;
        for (long seed = 1; seed <= 20; seed++) {
            CircuitBreaker b = keep(builder().failureThreshold(1).jitter(jitter).jitterSeed(seed * 7919));
            failOnce(b, OP);
            long openedAt = clock.millis();
            for (int k = 0; k < 3; k++) {
                long base = 10_000L << k;
                long retry = rejected(b, OP).retryAfter().orElseThrow().toMillis();
                long eligibleAt = clock.millis() + retry;
                assertTrue(retry >= (long) (base * (1 - jitter)) && retry <= (long) (base * (1 + jitter)),
                        "seed " + seed + " window " + retry + " outside jitter of " + base);
                // stable: later rejections in the same open period point at the same instant
                clock.advanceMillis(retry / 2);
                assertEquals(eligibleAt, clock.millis() + rejected(b, OP).retryAfter().orElseThrow().toMillis());
                double jf = Transitions.jitterFactor(seed * 7919, OP, openedAt, jitter);
                assertEquals(openedAt + (long) (base * jf), eligibleAt);
                clock.advanceMillis(eligibleAt - clock.millis());
                failOnce(b, OP); // trial fails, new open period with a new draw
                openedAt = clock.millis();
            }
            b.reset(OP);
        }
    }

    @Test
    void differentInstancesDrawDifferentJitterForTheSameOpenPeriod() {
        InMemoryStore shared = new InMemoryStore();
        CircuitBreaker a = keep(builder().store(shared.newClient()).failureThreshold(1).jitter(0.5).jitterSeed(1));
        CircuitBreaker c = keep(builder().store(shared.newClient()).failureThreshold(1).jitter(0.5).jitterSeed(2));
        failOnce(a, OP);
        long ra = rejected(a, OP).retryAfter().orElseThrow().toMillis();
        long rc = rejected(c, OP).retryAfter().orElseThrow().toMillis();
        assertTrue(ra != rc, "two seeds gave the same window " + ra);
        shared.close();
    }

    @Test
    void successThresholdNeedsThatManyTrialSuccesses() {
        CircuitBreaker b = keep(builder().failureThreshold(1).successThreshold(3));
        failOnce(b, OP);
        clock.advance(Duration.ofSeconds(10));
        ok(b, OP);
        assertEquals(1, b.state(OP).trialSuccesses());
        assertTrue(b.state(OP).open());
        ok(b, OP);
        assertEquals(2, b.state(OP).trialSuccesses());
        assertTrue(b.state(OP).open());
        ok(b, OP);
        assertFalse(b.state(OP).open());
        assertEquals(3, b.metrics(OP).trials());
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
    }

    @Test
    void halfOpenWithAPermitTakenRejectsOthers() {
        CircuitBreaker b = keep(builder().failureThreshold(1).halfOpenPermits(1));
        failOnce(b, OP);
        clock.advance(Duration.ofSeconds(10));
        CircuitOpenException[] inner = new CircuitOpenException[1];
        String r = b.execute(OP, () -> {
            // while this trial runs, another caller is rejected as half-open
            inner[0] = assertThrows(CircuitOpenException.class, () -> b.execute(OP, () -> "second"));
            return "trial";
        });
        assertEquals("trial", r);
        assertEquals(BreakerStatus.HALF_OPEN, inner[0].status());
        assertEquals(b.config().trialTimeout(), inner[0].retryAfter().orElseThrow());
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
    }

    @Test
    void threePermitsAllowThreeNestedTrialsAndRejectTheFourth() {
        CircuitBreaker b = keep(builder().failureThreshold(1).halfOpenPermits(3).successThreshold(3));
        failOnce(b, OP);
        clock.advance(Duration.ofSeconds(10));
        List<String> seen = new ArrayList<>();
        b.execute(OP, () -> b.execute(OP, () -> b.execute(OP, () -> {
            seen.add(assertThrows(CircuitOpenException.class, () -> b.execute(OP, () -> "4th")).status().name());
            return "3rd";
        })));
        assertEquals(List.of("HALF_OPEN"), seen);
        assertEquals(3, b.metrics(OP).trials());
        assertEquals(BreakerStatus.CLOSED, b.status(OP), "three trial successes close");
    }

    @Test
    void forceOpenHoldsWithoutTrialsUntilReset() {
        List<TransitionEvent> events = new ArrayList<>();
        CircuitBreaker b = keep(builder().onStateChange(events::add));
        b.forceOpen(OP);
        assertEquals(BreakerStatus.FORCED_OPEN, b.status(OP));
        clock.advance(Duration.ofHours(10));
        CircuitOpenException e = rejected(b, OP);
        assertEquals(BreakerStatus.FORCED_OPEN, e.status());
        assertEquals(0, b.metrics(OP).trials());
        assertFalse(b.check(OP));
        b.reset(OP);
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
        assertTrue(b.check(OP));
        assertEquals("ok", ok(b, OP));
        assertEquals(List.of(TransitionKind.FORCED_OPEN, TransitionKind.FORCED_CLOSED),
                events.stream().map(TransitionEvent::kind).toList());
    }

    @Test
    void forceHalfOpenLetsTheNextCallTry() {
        CircuitBreaker b = keep(builder());
        b.forceHalfOpen(OP);
        assertEquals(BreakerStatus.HALF_OPEN, b.status(OP));
        assertTrue(b.check(OP));
        failOnce(b, OP);
        assertEquals(1, b.metrics(OP).trials());
        assertEquals(BreakerStatus.OPEN, b.status(OP), "a failed forced trial reopens");
        b.forceHalfOpen(OP);
        ok(b, OP);
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
    }

    @Test
    void checkReadsWithoutClaiming() {
        CircuitBreaker b = keep(builder().failureThreshold(1));
        assertTrue(b.check(OP));
        failOnce(b, OP);
        assertFalse(b.check(OP));
        clock.advance(Duration.ofSeconds(10));
        assertTrue(b.check(OP));
        assertTrue(b.check(OP));
        assertEquals(0, b.metrics(OP).trials());
        ok(b, OP); // the permit is still free: check claimed nothing
        assertEquals(1, b.metrics(OP).trials());
    }

    @Test
    void manualRecordingBypassesTheGate() {
        CircuitBreaker b = keep(builder().failureThreshold(2));
        b.recordFailure(OP);
        b.recordFailure(OP);
        assertEquals(BreakerStatus.OPEN, b.status(OP));
        b.recordFailure(OP); // counted even while open, not rejected
        assertEquals(3, b.state(OP).failures());
        b.reset(OP);
        b.recordFailure(OP);
        b.recordSuccess(OP);
        assertEquals(0, b.state(OP).failures());
        assertEquals(Metrics.EMPTY, b.metrics(OP), "manual records are not calls");
    }

    @Test
    void errorsAreRethrownAndCounted() {
        CircuitBreaker b = keep(builder().failureThreshold(1));
        StackOverflowError err = new StackOverflowError("deep");
        assertSame(err, assertThrows(StackOverflowError.class, () -> b.execute(OP, () -> {
            throw err;
        })));
        assertEquals(BreakerStatus.OPEN, b.status(OP));
    }

    @Test
    void recordFailurePredicateDecidesWhichExceptionsCount() {
        CircuitBreaker b = keep(builder().failureThreshold(1)
                .recordFailure(t -> !(t instanceof IllegalArgumentException)));
        IllegalArgumentException bad = new IllegalArgumentException("caller's fault");
        assertSame(bad, assertThrows(IllegalArgumentException.class, () -> b.execute(OP, () -> {
            throw bad;
        })));
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
        assertEquals(1, b.metrics(OP).ignored(), "an exception that does not count is ignored (recorded as a success)");
        assertEquals(0, b.metrics(OP).successes() + b.metrics(OP).failures());
        failOnce(b, OP);
        assertEquals(BreakerStatus.OPEN, b.status(OP));
    }

    @Test
    void recordResultMarksStatusStyleFailuresButStillReturnsThem() {
        CircuitBreaker b = keep(builder().failureThreshold(2).recordResult(r -> "503".equals(r)));
        assertEquals("503", b.execute(OP, () -> "503"));
        assertEquals(1, b.state(OP).failures());
        assertEquals("503", b.execute(OP, () -> "503"));
        assertEquals(BreakerStatus.OPEN, b.status(OP));
        assertEquals(new Metrics(2, 0, 2, 0, 0, 0, 0), b.metrics(OP));
    }

    @Test
    void slowSyncCallCountsAsFailureButReturnsItsResult() {
        CircuitBreaker b = keep(builder().failureThreshold(1).callTimeout(Duration.ofSeconds(1)));
        assertEquals("fast", b.execute(OP, () -> {
            clock.advance(Duration.ofMillis(1000));
            return "fast";
        }));
        assertEquals(BreakerStatus.CLOSED, b.status(OP), "exactly the timeout is not over it");
        assertEquals("slow", b.execute(OP, () -> {
            clock.advance(Duration.ofMillis(1001));
            return "slow";
        }));
        assertEquals(BreakerStatus.OPEN, b.status(OP));
    }

    @Test
    void trialTimeoutDefaultsToTheSmallerOfCallTimeoutOrTenSecondsAndResetTimeout() {
        assertEquals(Duration.ofSeconds(10), keep(builder().resetTimeout(Duration.ofMinutes(1))).config().trialTimeout());
        assertEquals(Duration.ofSeconds(3), keep(builder().resetTimeout(Duration.ofSeconds(3))).config().trialTimeout());
        assertEquals(Duration.ofSeconds(2), keep(builder().callTimeout(Duration.ofSeconds(2))).config().trialTimeout());
        assertEquals(Duration.ofSeconds(80), keep(builder()).config().maxResetTimeout());
    }

    @Test
    void fallbackAnswersRejectionsOnlyAndPerCallFallbackWins() {
        List<RuntimeException> seen = new ArrayList<>();
        CircuitBreaker b = keep(builder().failureThreshold(1).fallback((op, rejection) -> {
            seen.add(rejection);
            return "cached:" + op;
        }));
        failOnce(b, OP); // a failure that ran is rethrown, never replaced by the fallback
        assertTrue(seen.isEmpty());
        assertEquals("cached:" + OP, b.execute(OP, () -> "live"));
        assertTrue(seen.get(0) instanceof CircuitOpenException);
        assertEquals("per-call", b.execute(OP, () -> "live", rejection -> "per-call"));
        assertEquals(2, b.metrics(OP).rejections());
    }

    @Test
    void checkedExceptionFromFallbackIsWrapped() {
        CircuitBreaker b = keep(builder().failureThreshold(1).fallback((op, r) -> {
            throw new IOException("no cache");
        }));
        failOnce(b, OP);
        java.lang.reflect.UndeclaredThrowableException e = assertThrows(
                java.lang.reflect.UndeclaredThrowableException.class, () -> ok(b, OP));
        assertTrue(e.getCause() instanceof IOException);
    }

    @Test
    void rejectionsCarryNoStackTraceByDefault() {
        CircuitBreaker cheap = keep(builder().failureThreshold(1));
        failOnce(cheap, OP);
        assertEquals(0, rejected(cheap, OP).getStackTrace().length);
        CircuitBreaker traced = keep(builder().failureThreshold(1).writableStackTraces(true));
        failOnce(traced, OP);
        assertTrue(rejected(traced, OP).getStackTrace().length > 0);
    }

    @Test
    void metricsCountEveryKindOfOutcome() {
        CircuitBreaker b = keep(builder().failureThreshold(2));
        ok(b, OP);
        failOnce(b, OP);
        failOnce(b, OP);
        rejected(b, OP);
        rejected(b, OP);
        clock.advance(Duration.ofSeconds(10));
        ok(b, OP);
        assertEquals(new Metrics(4, 2, 2, 0, 2, 0, 1), b.metrics(OP));
        ok(b, "b");
        assertEquals(List.of(OP, "b").stream().sorted().toList(), List.copyOf(b.allMetrics().keySet()));
        assertEquals(Metrics.EMPTY, b.metrics("never"));
    }

    @Test
    void onStateChangeSeesEveryTransitionOfItsOwnWrites() {
        List<TransitionEvent> events = new ArrayList<>();
        CircuitBreaker b = keep(builder().failureThreshold(2).onStateChange(events::add));
        failOnce(b, OP);
        assertTrue(events.isEmpty(), "a sub-threshold increment is not a transition");
        ok(b, OP);
        failOnce(b, OP);
        failOnce(b, OP);
        clock.advance(Duration.ofSeconds(10));
        failOnce(b, OP);
        clock.advance(Duration.ofSeconds(20));
        ok(b, OP);
        assertEquals(List.of(TransitionKind.OPENED, TransitionKind.REOPENED, TransitionKind.CLOSED),
                events.stream().map(TransitionEvent::kind).toList(), "clearing is not a transition (contract v2)");
        TransitionEvent opened = events.get(0);
        assertEquals(OP, opened.operation());
        assertEquals(BreakerStatus.CLOSED, opened.from());
        assertEquals(BreakerStatus.OPEN, opened.to());
        assertEquals(b.state(OP).version(), events.get(2).version());
    }

    @Test
    void listenerExceptionsDoNotBreakCalls() {
        CircuitBreaker b = keep(builder().failureThreshold(1).onStateChange(e -> {
            throw new IllegalStateException("listener bug");
        }));
        failOnce(b, OP);
        assertEquals(BreakerStatus.OPEN, b.status(OP));
    }

    @Test
    void longOperationNamesAndTooManyOperationsWarnOnce() {
        try (LogCapture log = LogCapture.start()) {
            CircuitBreaker b = keep(builder().maxOperations(4));
            String longName = "x".repeat(101);
            ok(b, longName);
            ok(b, longName + "y");
            ok(b, "x".repeat(100));
            assertEquals(1, log.warnings("operation name of"));
            ok(b, "a");
            assertEquals(0, log.warnings("maxOperations"), "exactly maxOperations is fine");
            ok(b, "b");
            ok(b, "c");
            assertEquals(1, log.warnings("more than 4 distinct operations"));
            assertEquals("ok", ok(b, "d"), "still works past maxOperations");
        }
    }

    @Test
    void badOperationNamesAndCallsFailClearly() {
        CircuitBreaker b = keep(builder());
        assertThrows(NullPointerException.class, () -> b.execute(null, () -> "x"));
        assertThrows(IllegalArgumentException.class, () -> b.execute("", () -> "x"));
        assertThrows(NullPointerException.class, () -> b.execute(OP, (CheckedSupplier<String, RuntimeException>) null));
        assertThrows(NullPointerException.class, () -> b.execute(OP, (Runnable) null));
        assertThrows(NullPointerException.class, () -> b.executeAsync(OP, null));
    }

    @Test
    void closeIsIdempotentAndAClosedBreakerFailsFast() {
        CircuitBreaker b = builder().build();
        ok(b, OP);
        b.close();
        b.close();
        assertThrows(IllegalStateException.class, () -> ok(b, OP));
        assertFalse(b.isLocalCacheActive());
    }

    @Test
    void closeClosesTheStoreUnlessToldNotTo() {
        InMemoryStore backend = new InMemoryStore();
        SpyStore s1 = SpyStore.over(backend);
        builder().store(s1).build().close();
        assertEquals(1, s1.closes.get());
        SpyStore s2 = SpyStore.over(backend);
        builder().store(s2).closeStore(false).build().close();
        assertEquals(0, s2.closes.get());
        backend.close();
    }

    @Test
    void ofDefaultsIsALocalBreakerWithTheReferenceDefaults() {
        CircuitBreaker b = CircuitBreaker.ofDefaults();
        breakers.add(b);
        CircuitBreakerConfig c = b.config();
        assertEquals(Strategy.CONSECUTIVE, c.strategy());
        assertEquals(5, c.failureThreshold());
        assertEquals(Duration.ofSeconds(60), c.resetTimeout());
        assertEquals(Duration.ofMinutes(8), c.maxResetTimeout());
        assertEquals(0.1, c.jitter());
        assertEquals(Duration.ofSeconds(10), c.trialTimeout());
        assertEquals(Duration.ofSeconds(2), c.openCacheRefresh());
        assertEquals(StoreErrorPolicy.ALLOW, c.storeErrorPolicy());
        assertFalse(c.store().isPresent());
        assertFalse(b.isLocalCacheActive());
        assertNotNull(c.policy());
        assertEquals(BreakerState.INITIAL, b.state(OP));
    }
}
