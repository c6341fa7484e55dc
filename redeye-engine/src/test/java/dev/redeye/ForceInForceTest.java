package dev.redeye;

import static dev.redeye.LocalModeTest.failOnce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The manual API skips a change whose target is already in force: forcing open a breaker forced open, resetting
 * a closed breaker whose counters are clean (or that has no state at all) and forcing half-open a breaker every
 * instance may already try are no-ops: no write, no version bump, no feed event, no {@code onStateChange}. A
 * change that does something is still one transition.
 */
class ForceInForceTest extends BreakersOverInMemoryStore {
    private static final String OP = "payments";
    private final List<TransitionEvent> own = new CopyOnWriteArrayList<>();

    private CircuitBreaker build(CircuitBreakerBuilder b) {
        return keep(b.clock(clock).jitter(0).resetTimeout(Duration.ofSeconds(10)).onStateChange(own::add));
    }

    private static List<TransitionKind> kinds(List<TransitionEvent> events) {
        return events.stream().map(TransitionEvent::kind).toList();
    }

    @Test
    void localModeForcesEachStateOnce() {
        CircuitBreaker b = build(CircuitBreaker.builder());
        b.reset(OP);
        assertTrue(b.storedState(OP).isEmpty(), "resetting a breaker with no state writes none");
        b.forceOpen(OP);
        long v = b.state(OP).version();
        b.forceOpen(OP);
        assertEquals(v, b.state(OP).version(), "forcing open twice bumps the version once");
        b.forceHalfOpen(OP);
        clock.advance(Duration.ofSeconds(1));
        b.forceHalfOpen(OP);
        assertEquals(v + 1, b.state(OP).version());
        b.reset(OP);
        b.reset(OP);
        assertEquals(v + 2, b.state(OP).version());
        assertEquals(List.of(TransitionKind.FORCED_OPEN, TransitionKind.FORCED_HALF_OPEN, TransitionKind.FORCED_CLOSED),
                kinds(own));
    }

    @Test
    void distributedModeWritesAndPublishesNothingForAStateInForce() throws Exception {
        SpyStore store = SpyStore.over(backend);
        List<TransitionEvent> fleet = new CopyOnWriteArrayList<>();
        CircuitBreaker watcher = build(CircuitBreaker.builder().store(SpyStore.over(backend))
                .onFleetStateChange(fleet::add));
        CircuitBreaker b = build(CircuitBreaker.builder().store(store));

        b.reset(OP);
        assertEquals(0, store.writes.get(), "a reset of an operation with no state");
        b.forceOpen(OP);
        b.forceOpen(OP);
        b.forceOpen(OP);
        assertEquals(1, store.writes.get(), "forced open once");
        b.reset(OP);
        b.reset(OP);
        assertEquals(2, store.writes.get(), "reset once");
        failOnce(b, OP); // a failure to clear: the next reset does something
        int writes = store.writes.get();
        b.reset(OP);
        assertEquals(writes + 1, store.writes.get());
        BreakerState s = b.state(OP);
        assertEquals(0, s.failures());
        assertFalse(s.open());

        assertEquals(List.of(TransitionKind.FORCED_OPEN, TransitionKind.FORCED_CLOSED, TransitionKind.FORCED_CLOSED),
                kinds(own));
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (fleet.size() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        Thread.sleep(50); // an extra event would have arrived by now
        assertEquals(kinds(own), kinds(fleet), "the feed carries the same transitions, no more");
        assertEquals(0, watcher.metrics(OP).calls());
    }

    @Test
    void anErrorRateBreakerWithSamplesIsNotCleanAndItsResetIsATransition() {
        CircuitBreaker b = build(CircuitBreaker.builder().strategy(dev.redeye.api.Strategy.ERROR_RATE));
        LocalModeTest.ok(b, OP);
        assertEquals(1, b.state(OP).samples());
        b.reset(OP);
        assertEquals(0, b.state(OP).samples());
        b.reset(OP);
        assertEquals(List.of(TransitionKind.FORCED_CLOSED), kinds(own));
    }
}
