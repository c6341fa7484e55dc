package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Point 1 of contract v2 in the engine: a trial's outcome is fenced by the version of the open period it was
 * admitted under. With {@code halfOpenPermits(2)} and a dependency still down, both trials of a window fail, yet
 * each window reopens the breaker once (openCount + 1, version + 1, the window doubles, not quadruples); a
 * success that arrives from an earlier period never closes a breaker that reopened since.
 */
class TrialFencingTest {
    private static final String OP = "fenced";
    private final MutableClock clock = new MutableClock();
    private final InMemoryStore backend = new InMemoryStore();
    private final List<TransitionEvent> events = new CopyOnWriteArrayList<>();
    private final CircuitBreaker a = builder().build();
    private final CircuitBreaker b = builder().build();

    private CircuitBreakerBuilder builder() {
        return CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1).halfOpenPermits(2)
                .resetTimeout(Duration.ofSeconds(10)).backoffMultiplier(2).maxResetTimeout(Duration.ofHours(1))
                .trialTimeout(Duration.ofMinutes(5)).store(backend.newClient()).onStateChange(events::add);
    }

    @AfterEach
    void close() {
        a.close();
        b.close();
        backend.close();
    }

    private static void await(CompletableFuture<?> f) {
        try {
            f.get(5, TimeUnit.SECONDS);
        } catch (Exception expected) {
            // the trial's own failure
        }
    }

    @Test
    void twoFailingTrialsOfOneWindowReopenOnceAndTheBackoffDoublesPerWindow() {
        LocalModeTest.failOnce(a, OP);
        BreakerState s = a.state(OP);
        long window = 10_000;
        for (int w = 1; w <= 4; w++) {
            clock.advanceMillis(window);
            CompletableFuture<String> t1 = new CompletableFuture<>();
            CompletableFuture<String> t2 = new CompletableFuture<>();
            CompletableFuture<String> r1 = a.executeAsync(OP, () -> t1);
            CompletableFuture<String> r2 = b.executeAsync(OP, () -> t2);
            assertFalse(r1.isDone() || r2.isDone(), "both permits run a trial in window " + w);
            t1.completeExceptionally(new IOException("still down"));
            t2.completeExceptionally(new IOException("still down"));
            await(r1);
            await(r2);
            BreakerState next = a.state(OP);
            assertEquals(s.openCount() + 1, next.openCount(), "openCount after window " + w);
            assertEquals(s.version() + 1, next.version(), "version after window " + w);
            window *= 2;
            assertEquals(Duration.ofMillis(window), LocalModeTest.rejected(b, OP).retryAfter().orElseThrow(),
                    "the next window doubles (window " + w + ")");
            s = next;
        }
        assertEquals(5, events.size(), "one OPENED and one REOPENED per window: " + events);
    }

    @Test
    void aLateSuccessFromAnEarlierPeriodNeverClosesAReopenedBreaker() {
        LocalModeTest.failOnce(a, OP);
        clock.advance(Duration.ofSeconds(10));
        CompletableFuture<String> slow = new CompletableFuture<>();
        CompletableFuture<String> fails = new CompletableFuture<>();
        CompletableFuture<String> late = a.executeAsync(OP, () -> slow);
        CompletableFuture<String> failed = b.executeAsync(OP, () -> fails);
        fails.completeExceptionally(new IOException("down"));
        await(failed);
        BreakerState reopened = a.state(OP);
        assertEquals(1, reopened.openCount());
        slow.complete("late success");
        await(late);
        BreakerState after = a.state(OP);
        assertTrue(after.open(), "a success from the earlier period must not close the reopened breaker");
        assertEquals(reopened.version(), after.version());
        assertEquals(0, after.trialSuccesses(), "nor count towards the new period");
        assertEquals(List.of(TransitionKind.OPENED, TransitionKind.REOPENED),
                events.stream().map(TransitionEvent::kind).toList());
    }
}
