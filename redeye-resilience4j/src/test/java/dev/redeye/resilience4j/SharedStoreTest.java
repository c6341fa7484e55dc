package dev.redeye.resilience4j;

import static dev.redeye.resilience4j.TestCalls.fail;
import static dev.redeye.resilience4j.TestStores.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.Stores;
import dev.redeye.tck.MutableClock;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two adapters standing for two instances of a fleet: two factories over clients of one named in-process store
 * ({@code memory://NAME}), on one virtual clock. What one instance's calls do, the other sees.
 */
class SharedStoreTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final MutableClock clock = new MutableClock(1_700_000_000_000L);
    private final String uri = "memory://r4j-fleet-" + System.nanoTime();
    private final Resilience4jBreakers instanceA = factory();
    private final Resilience4jBreakers instanceB = factory();

    private Resilience4jBreakers factory() {
        return Resilience4jBreakers.builder().store(Stores.open(uri))
                .redeyeOptions(b -> b.clock(clock).ticker(clock)).build();
    }

    @AfterEach
    void close() {
        instanceA.close();
        instanceB.close();
    }

    private static CircuitBreakerConfig config() {
        return TestCalls.fleetConfig(WAIT);
    }

    @Test
    void failuresThroughOneInstanceOpenTheOther() throws Exception {
        CircuitBreaker a = instanceA.circuitBreaker("inventory", config());
        CircuitBreaker b = instanceB.circuitBreaker("inventory", config());
        List<String> bTransitions = new CopyOnWriteArrayList<>();
        b.getEventPublisher().onStateTransition(
                e -> bTransitions.add(e.getStateTransition().toString()));
        List<Float> bRates = new CopyOnWriteArrayList<>();
        b.getEventPublisher().onFailureRateExceeded(e -> bRates.add(e.getFailureRate()));
        assertTrue(b.tryAcquirePermission());
        b.onSuccess(1, java.util.concurrent.TimeUnit.MILLISECONDS);
        fail(a);
        fail(a);
        fail(a); // the shared window: 1 success (b) and 3 failures (a), 75 %
        assertEquals(State.OPEN, a.getState());
        assertFalse(b.tryAcquirePermission(), "b reads the shared state");
        assertThrows(CallNotPermittedException.class, b::acquirePermission);
        eventually(() -> b.getState() == State.OPEN, "b's own view follows the feed");
        eventually(() -> bTransitions.contains("State transition from CLOSED to OPEN"), "b publishes the fleet's "
                + "transition");
        assertEquals(List.of(75f), bRates, "and the fleet's failure rate that opened it");
    }

    @Test
    void theFleetSharesOneTrialAndOneClose() throws Exception {
        CircuitBreaker a = instanceA.circuitBreaker("inventory", config());
        CircuitBreaker b = instanceB.circuitBreaker("inventory", config());
        for (int i = 0; i < 4; i++) {
            fail(a);
        }
        clock.advance(WAIT);
        assertTrue(a.tryAcquirePermission(), "a wins the one trial");
        assertFalse(b.tryAcquirePermission(), "permittedNumberOfCallsInHalfOpenState is fleet-wide");
        a.onSuccess(1, java.util.concurrent.TimeUnit.MILLISECONDS);
        assertEquals(State.CLOSED, a.getState());
        eventually(() -> b.getState() == State.CLOSED, "b sees the close");
        assertTrue(b.tryAcquirePermission());
        b.releasePermission();
    }

    @Test
    void forcedOpenAndDisabledThroughOneInstanceHoldForTheOther() throws Exception {
        CircuitBreaker a = instanceA.circuitBreaker("inventory", config());
        CircuitBreaker b = instanceB.circuitBreaker("inventory", config());
        a.transitionToForcedOpenState();
        assertFalse(b.tryAcquirePermission());
        eventually(() -> b.getState() == State.FORCED_OPEN, "b sees the forced open");
        a.transitionToDisabledState();
        eventually(() -> b.getState() == State.DISABLED, "b sees the mode");
        for (int i = 0; i < 10; i++) {
            fail(b);
        }
        assertTrue(a.tryAcquirePermission());
        a.releasePermission();
        b.reset();
        eventually(() -> a.getState() == State.CLOSED, "a sees the reset");
    }

    @Test
    void eachInstanceReportsTheSharedWindowAsOfItsLastWrite() {
        CircuitBreaker a = instanceA.circuitBreaker("inventory", config());
        CircuitBreaker b = instanceB.circuitBreaker("inventory", config());
        fail(a);
        fail(a);
        assertEquals(2, a.getMetrics().getNumberOfFailedCalls());
        assertEquals("ok", b.executeSupplier(() -> "ok"));
        assertEquals(3, b.getMetrics().getNumberOfBufferedCalls(), "b's write returned the fleet's window");
        assertEquals(2, b.getMetrics().getNumberOfFailedCalls());
        assertEquals(2, a.getMetrics().getNumberOfBufferedCalls(), "a has not seen b's success yet: its own view");
    }
}
