package dev.redeye.resilience4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.tck.MutableClock;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The documented replacement for Resilience4j's {@code maxWaitDurationInHalfOpenState} (refused by the adapter)
 * across a fleet: an instance that took the half-open call and never completes it (its process hangs or died)
 * delays the fleet's recovery by {@code trialTimeout} at most, because its claim in the shared store expires and
 * another instance takes the call over. The stores expire claims by real time (the in-memory store by
 * {@code System.nanoTime}, Redis by the server's clock), so the wait is real: a 300 ms timeout, polled for up to
 * 5 s; the virtual clock ends the other instance's own hold after each claim it lost.
 */
class FleetTrialTimeoutTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration TRIAL_TIMEOUT = Duration.ofMillis(300);

    private final MutableClock clock = new MutableClock(1_700_000_000_000L);

    private Resilience4jBreakers instance(TestStores.Location store) {
        return Resilience4jBreakers.builder().store(store.open())
                .redeyeOptions(b -> b.clock(clock).ticker(clock).trialTimeout(TRIAL_TIMEOUT)).build();
    }

    private static CircuitBreakerConfig config() {
        return TestCalls.fleetConfig(WAIT);
    }

    @ParameterizedTest
    @EnumSource(TestStores.Kind.class)
    void aHalfOpenCallAbandonedByOneInstanceIsTakenOverByAnotherAfterTrialTimeout(TestStores.Kind kind)
            throws InterruptedException {
        TestStores.Location store = TestStores.fresh(kind);
        try (Resilience4jBreakers instanceA = instance(store); Resilience4jBreakers instanceB = instance(store)) {
            RedeyeBackedCircuitBreaker a = instanceA.circuitBreaker("inventory", config());
            RedeyeBackedCircuitBreaker b = instanceB.circuitBreaker("inventory", config());
            for (int i = 0; i < 4; i++) {
                TestCalls.fail(a);
            }
            assertEquals(State.OPEN, a.getState());
            clock.advance(WAIT);
            assertTrue(a.tryAcquirePermission(), "A takes the fleet's one half-open call, and never completes it");
            assertFalse(b.tryAcquirePermission(), "permittedNumberOfCallsInHalfOpenState is fleet-wide");

            // Each claim B loses holds B's view for trialTimeout on B's ticker (no store call meanwhile): each
            // attempt first moves the virtual clock past that hold. B wins once A's claim expired in the store,
            // which judges expiry by real time (the in-memory store's System.nanoTime, Redis's server clock).
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            boolean permitted = false;
            while (!permitted) {
                assertTrue(System.nanoTime() < deadline, "A's claim did not expire within 5 s");
                Thread.sleep(20);
                clock.advance(TRIAL_TIMEOUT);
                permitted = b.tryAcquirePermission();
            }
            b.onSuccess(5, TimeUnit.MILLISECONDS);
            assertEquals(State.CLOSED, b.getState(), "B's call closed the breaker for the fleet");
            a.releasePermission(); // A's call, finally: its expired claim frees nothing, records nothing
            assertEquals(0, a.outstandingPermits());
            assertEquals(0, b.outstandingPermits());
            assertTrue(a.tryAcquirePermission(), "A follows the fleet's state: closed");
            a.releasePermission();
        } finally {
            store.cleanUp();
        }
    }
}
