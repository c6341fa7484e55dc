package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.spi.Transitions;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The skew bound: an instance computes a trial's eligibility from the stored {@code openedAt}, but never later
 * than its own (jittered) window after it first saw that open period, by its ticker. A fleet member whose
 * clock runs an hour ahead opens the breaker: the others wait one window, not an hour and a window. Nobody
 * becomes eligible earlier than a window after the period began: the cap only shortens a wait that a skewed
 * clock made longer, and the claim is still arbitrated by the store.
 */
class ClockSkewTest {
    private static final String OP = "skewed";
    private static final long START = 1_700_000_000_000L;
    private static final long WINDOW = 10_000;
    private final InMemoryStore backend = new InMemoryStore();

    @AfterEach
    void close() {
        backend.close();
    }

    private CircuitBreakerBuilder on(MutableClock c) {
        return CircuitBreaker.builder().clock(c).ticker(c).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofMillis(WINDOW)).store(backend.newClient());
    }

    private static CircuitOpenException rejected(CircuitBreaker b) {
        return assertThrows(CircuitOpenException.class, () -> b.execute(OP, () -> "ran"));
    }

    /**
     * A, an hour ahead (or, the other way round, B an hour behind), opens the breaker; B sees it at once and
     * runs its trial one window later by its ticker: rejected until the last millisecond before, with a
     * retryAfter that says so.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void oneFastClockDoesNotHoldTheFleetOpen(boolean aAhead) {
        MutableClock clockA = new MutableClock(aAhead ? START + 3_600_000 : START);
        MutableClock clockB = new MutableClock(aAhead ? START : START - 3_600_000);
        try (CircuitBreaker a = on(clockA).build(); CircuitBreaker b = on(clockB).build()) {
            LocalModeTest.failOnce(a, OP);
            assertEquals(WINDOW, rejected(b).retryAfter().orElseThrow().toMillis(), "one window from when B saw it");
            clockA.advanceMillis(WINDOW - 1);
            clockB.advanceMillis(WINDOW - 1);
            CircuitOpenException late = rejected(b);
            assertEquals(BreakerStatus.OPEN, late.status());
            assertEquals(1, late.retryAfter().orElseThrow().toMillis());
            assertEquals(BreakerStatus.OPEN, b.status(OP));
            clockA.advanceMillis(1);
            clockB.advanceMillis(1);
            assertEquals(BreakerStatus.HALF_OPEN, b.status(OP), "status agrees with admission");
            assertEquals("trial", b.execute(OP, () -> "trial"), "B's trial, one window after it saw the opening");
            assertEquals(1, b.metrics(OP).trials());
            assertTrue(!backend.get(OP).orElseThrow().open());
        }
    }

    /** The same in local mode on an instance whose clock jumps an hour back right after the opening. */
    @Test
    void theCapHoldsInLocalModeToo() {
        MutableClock clock = new MutableClock(START);
        try (CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofMillis(WINDOW)).build()) {
            LocalModeTest.failOnce(b, OP);
            clock.step(Duration.ofHours(-1));
            clock.advanceMillis(WINDOW);
            assertEquals("trial", b.execute(OP, () -> "trial"));
        }
    }

    /**
     * The cap is a bound, not a delay: an instance that first sees an open period late (it started, or had no
     * traffic) is eligible at {@code openedAt + window} by the stored time, as before, not a window after.
     */
    @Test
    void anInstanceThatSeesThePeriodLateIsNotDelayedByTheCap() {
        MutableClock clockA = new MutableClock(START);
        MutableClock clockB = new MutableClock(START);
        try (CircuitBreaker a = on(clockA).build(); CircuitBreaker b = on(clockB).build()) {
            LocalModeTest.failOnce(a, OP);
            clockA.advanceMillis(WINDOW - 2_000);
            clockB.advanceMillis(WINDOW - 2_000);
            assertEquals(2_000, rejected(b).retryAfter().orElseThrow().toMillis(), "first seen now: the stored window decides");
            clockA.advanceMillis(2_000);
            clockB.advanceMillis(2_000);
            assertEquals("trial", b.execute(OP, () -> "trial"));
        }
    }

    /**
     * Never early: with jitter, B's cap is its own jittered window after it saw the opening. Up to a
     * millisecond before it B rejects, though its clock is behind; the claim then decides.
     */
    @Test
    void theCapIsThisInstancesJitteredWindow() {
        long seed = 42;
        double jitter = 0.5;
        MutableClock clockA = new MutableClock(START);
        MutableClock clockB = new MutableClock(START - 3_600_000);
        try (CircuitBreaker a = on(clockA).jitter(jitter).build();
             CircuitBreaker b = on(clockB).jitter(jitter).jitterSeed(seed).build()) {
            LocalModeTest.failOnce(a, OP);
            BreakerState open = backend.get(OP).orElseThrow();
            double jf = Transitions.jitterFactor(seed, OP, open.openedAt(), jitter);
            long window = Transitions.resetWindowMillis(open, b.config().policy(), jf);
            assertTrue(window != WINDOW, "the factor matters: " + jf);
            rejected(b);
            clockA.advanceMillis(window - 1);
            clockB.advanceMillis(window - 1);
            assertEquals(1, rejected(b).retryAfter().orElseThrow().toMillis());
            clockA.advanceMillis(1);
            clockB.advanceMillis(1);
            assertEquals("trial", b.execute(OP, () -> "trial"));
        }
    }
}
