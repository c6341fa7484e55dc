package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.spi.Store;
import dev.redeye.spi.TrialClaims;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A caller reads the state as half-open, then, before its claim, another instance runs a whole trial and
 * releases its permit. The caller's claim succeeds, but its read is stale: it must not run a second trial
 * back to back with the finished one.
 */
class StaleTrialTest extends BreakersOverInMemoryStore {
    private static final String OP = "pay";
    private final AtomicReference<Runnable> hook = new AtomicReference<>();
    private CircuitBreaker a;
    private CircuitBreaker b;

    /** A client whose next claimTrial first runs {@code beforeClaim} (another instance's whole trial). */
    private static Store withHook(Store client, AtomicReference<Runnable> beforeClaim) {
        TrialClaims real = client.capability(TrialClaims.class).orElseThrow();
        return new SpyStore(client) {
            @Override
            public Optional<String> claimTrial(String key, int permits, Duration ttl) {
                Runnable r = beforeClaim.getAndSet(null);
                if (r != null) {
                    r.run();
                }
                return real.claimTrial(key, permits, ttl);
            }
        };
    }

    private CircuitBreaker build(Store store) {
        CircuitBreaker cb = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofSeconds(5)).store(store).build();
        breakers.add(cb);
        return cb;
    }

    /** b opens the breaker and the open window passes; a's next claim first runs {@link #hook}. */
    @BeforeEach
    void openThenLetTheWindowPass() {
        a = build(withHook(backend.newClient(), hook));
        b = build(backend.newClient());
        fail(b);
        clock.advance(Duration.ofSeconds(5));
    }

    private static void fail(CircuitBreaker b) {
        assertThrows(IOException.class, () -> b.execute(OP, () -> {
            throw new IOException("down");
        }));
    }

    @Test
    void aTrialThatFailedMeanwhileIsNotFollowedByASecondTrial() {
        hook.set(() -> fail(b)); // b wins the trial first and it fails: reopened
        AtomicInteger ran = new AtomicInteger();
        CircuitOpenException e = assertThrows(CircuitOpenException.class,
                () -> a.execute(OP, ran::incrementAndGet));
        assertEquals(0, ran.get(), "no second trial on a stale read");
        assertEquals(BreakerStatus.OPEN, e.status());
        assertTrue(e.retryAfter().orElseThrow().toMillis() > 0);
        assertEquals(1, a.state(OP).openCount(), "one failed trial, one backoff step");
        assertTrue(backend.claimTrial(OP, 1, Duration.ofSeconds(1)).isPresent(), "the stale claim was released");
    }

    @Test
    void aTrialThatClosedTheBreakerMeanwhileLetsTheCallRunAsANormalCall() throws Exception {
        hook.set(() -> b.execute(OP, () -> "ok")); // b's trial succeeds: closed
        assertEquals("normal", a.execute(OP, () -> "normal"));
        assertEquals(1, b.metrics(OP).trials());
        assertEquals(0, a.metrics(OP).trials(), "a ran a normal call, not a trial");
        assertEquals(BreakerStatus.CLOSED, a.status(OP));
    }
}
