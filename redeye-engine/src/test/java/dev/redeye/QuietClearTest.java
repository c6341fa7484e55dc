package dev.redeye;

import static dev.redeye.LocalModeTest.failOnce;
import static dev.redeye.LocalModeTest.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Point 5: clearing sub-threshold failures is a write, not a transition. A flapping dependency (60 failure /
 * success cycles) writes each clear but fires no onStateChange, publishes nothing and keeps the version; the
 * caches of this and another instance keep serving.
 */
class QuietClearTest {
    private static final String OP = "flapping";

    @Test
    void aFlappingDependencyWritesClearsButFiresNoTransitions() throws InterruptedException {
        MutableClock clock = new MutableClock();
        InMemoryStore backend = new InMemoryStore();
        List<TransitionEvent> mine = new CopyOnWriteArrayList<>();
        List<TransitionEvent> feed = new CopyOnWriteArrayList<>();
        var probe = backend.subscribe(feed::add, () -> { });
        CountingStore counted = new CountingStore(backend.newClient());
        try (CircuitBreaker a = CircuitBreaker.builder().clock(clock).ticker(clock).failureThreshold(5).store(counted)
                .localCache(Duration.ofMinutes(1)).onStateChange(mine::add).build();
             CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).failureThreshold(5)
                     .store(backend.newClient()).localCache(Duration.ofMinutes(1)).build()) {
            ok(a, OP);
            long version = a.state(OP).version();
            CountingStore.Counts before = counted.snapshot();
            for (int i = 0; i < 60; i++) {
                failOnce(a, OP);
                ok(a, OP);
                ok(b, OP);
            }
            CountingStore.Counts used = counted.snapshot().minus(before);
            assertEquals(120, used.writes(), "each failure and each clear is written");
            assertEquals(0, used.reads(), "the own writes keep the cache current");
            assertEquals(List.of(), mine, "no onStateChange for a clear");
            assertEquals(version, a.state(OP).version(), "the version never moved");
            assertEquals(0, a.state(OP).failures());
            assertTrue(a.isLocalCacheActive() && b.isLocalCacheActive());
            a.forceOpen(OP); // a transition after the flapping: once it arrives, everything before it has
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (feed.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(List.of(TransitionKind.FORCED_OPEN), feed.stream().map(TransitionEvent::kind).toList(),
                    "the clears published nothing");
        } finally {
            probe.close();
            backend.close();
        }
    }
}
