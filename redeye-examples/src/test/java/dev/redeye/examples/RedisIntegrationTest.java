package dev.redeye.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.Permit;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.reactor.RedeyeOperator;
import dev.redeye.tck.MutableClock;
import dev.redeye.testsupport.RedisFleet;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The ecosystem features over a real Redis ({@code REDEYE_REDIS_URL}), two breakers over two clients standing
 * for two instances: trial permits are fleet-wide, a lost trial permit is released by its lease, fleet
 * listeners hear the other instance, decorators and redeye-reactor's operator share the breaker.
 */
class RedisIntegrationTest {
    private static final String OP = "ledger";

    private final MutableClock clock = new MutableClock(1_700_000_000_000L); // shared by both instances
    private final RedisFleet fleet = new RedisFleet("examples", OP);

    @AfterEach
    void close() {
        fleet.close();
    }

    private CircuitBreaker instance(CircuitBreakerBuilder b) {
        return fleet.instance(b.clock(clock).ticker(clock).jitter(0).failureThreshold(2)
                .resetTimeout(Duration.ofSeconds(10)).trialTimeout(Duration.ofSeconds(5)));
    }

    private void trip(CircuitBreaker b) {
        for (int i = 0; i < 2; i++) {
            assertTrue(b.tryAcquire(OP).onFailure(new IOException("down")));
        }
    }

    @Test
    void aTrialPermitIsFleetWideAndALostOneIsReleasedByItsLease() {
        CircuitBreaker a = instance(CircuitBreaker.builder());
        CircuitBreaker b = instance(CircuitBreaker.builder());
        trip(a);
        assertFalse(b.tryAcquire(OP).isPermitted(), "B sees the trip in the shared store");
        clock.advance(Duration.ofSeconds(10));
        Permit lost = a.tryAcquire(OP);
        assertTrue(lost.isTrial(), lost.toString());
        Permit refused = b.tryAcquire(OP);
        assertEquals(BreakerStatus.HALF_OPEN, ((CircuitOpenException) refused.rejection()).status(),
                "one trial for the fleet");
        // nobody completes `lost`; A's lease runs out with trialTimeout, and A takes its slot and claim back
        clock.advance(Duration.ofSeconds(5));
        Permit next = a.tryAcquire(OP);
        assertTrue(next.isTrial(), "the lost permit's claim and slot were taken back: " + next);
        assertFalse(lost.onSuccess(), "too late");
        assertTrue(next.onSuccess());
        assertEquals(BreakerStatus.CLOSED, b.status(OP), "closed for the fleet");
        assertTrue(b.tryAcquire(OP).onSuccess());
    }

    @Test
    void fleetListenersHearTheOtherInstance() throws Exception {
        List<TransitionEvent> heard = new CopyOnWriteArrayList<>();
        CircuitBreaker a = instance(CircuitBreaker.builder());
        instance(CircuitBreaker.builder().onFleetStateChange(heard::add));
        trip(a);
        a.reset(OP);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (heard.size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(10); // the Redis stream is read by the store's own thread
        }
        assertEquals(List.of(TransitionKind.OPENED, TransitionKind.FORCED_CLOSED),
                heard.stream().filter(e -> e.operation().equals(OP)).map(TransitionEvent::kind).toList());
    }

    @Test
    void decoratorsAndTheReactorGuardShareOneBreaker() {
        CircuitBreaker a = instance(CircuitBreaker.builder());
        CircuitBreaker b = instance(CircuitBreaker.builder());
        Supplier<String> failing = a.decorateSupplier(OP, () -> {
            throw new IllegalStateException("down");
        });
        assertThrows(IllegalStateException.class, failing::get);
        Mono<String> guarded = Mono.<String>error(new IOException("down")).transformDeferred(RedeyeOperator.of(b, OP));
        assertThrows(Exception.class, guarded::block);
        CircuitOpenException e = assertThrows(CircuitOpenException.class,
                Mono.just("x").transformDeferred(RedeyeOperator.of(b, OP))::block);
        assertEquals(OP, e.operation());
        assertThrows(CircuitOpenException.class, a.decorateSupplier(OP, () -> "x")::get,
                "one failure on each instance opened the shared breaker");
    }
}
