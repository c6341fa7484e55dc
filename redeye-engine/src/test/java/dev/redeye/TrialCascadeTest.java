package dev.redeye;

import static dev.redeye.LocalModeTest.failOnce;
import static dev.redeye.LocalModeTest.rejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Point 4, no trial cascades: a trial hanging on a dead dependency loses its claim to expiry, but the instance
 * running it claims no other trial of the operation until it returns, however many trial timeouts pass. Sync
 * and async, with store claims (expired by the test) and with per-instance claims (a store without
 * TrialClaims).
 */
class TrialCascadeTest extends BreakersOverInMemoryStore {
    private static final String OP = "hanging";

    private CircuitBreaker build(dev.redeye.spi.Store store) {
        CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofSeconds(10)).trialTimeout(Duration.ofSeconds(5)).store(store).build();
        breakers.add(b);
        return b;
    }

    @Test
    void anAsyncTrialWhoseClaimExpiredBlocksFurtherTrialsOfItsInstance() {
        ManualClaims claims = new ManualClaims();
        CircuitBreaker b = build(claims.over(backend.newClient()));
        failOnce(b, OP);
        clock.advance(Duration.ofSeconds(10));
        CompletableFuture<String> hung = new CompletableFuture<>();
        CompletableFuture<String> trial = b.executeAsync(OP, () -> hung);
        for (int i = 0; i < 10; i++) {
            claims.expireAll();
            clock.advance(Duration.ofSeconds(5)); // one more trialTimeout
            assertEquals(BreakerStatus.HALF_OPEN, rejected(b, OP).status(), "after " + (i + 1) + " trial timeouts");
        }
        assertEquals(1, claims.claimCalls.get(), "no second claim while the first trial runs");
        assertEquals(1, b.metrics(OP).trials());
        hung.complete("finally");
        assertTrue(trial.isDone());
        assertEquals("ok", b.execute(OP, () -> "ok"), "once it returned, the next caller may claim");
    }

    @Test
    void aSyncTrialHangingOnAThreadBlocksFurtherTrialsOfItsInstanceWithoutTrialClaims() throws Exception {
        SpyStore store = SpyStore.over(backend, TrialClaims.class); // per-instance claims only
        CircuitBreaker b = build(store);
        failOnce(b, OP);
        clock.advance(Duration.ofSeconds(10));
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            try {
                b.execute(OP, () -> {
                    entered.countDown();
                    release.await();
                    return "late";
                });
            } catch (InterruptedException unexpected) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        assertTrue(entered.await(10, TimeUnit.SECONDS));
        int reads = store.reads.get();
        for (int i = 0; i < 5; i++) {
            clock.advance(Duration.ofSeconds(6)); // well past trialTimeout each time
            assertEquals(BreakerStatus.HALF_OPEN, rejected(b, OP).status());
        }
        assertEquals(reads, store.reads.get(), "rejected from this instance's own running trial, no reads");
        assertEquals(1, b.metrics(OP).trials(), "one hung thread, not one per trialTimeout");
        release.countDown();
        t.join(10_000);
        assertFalse(t.isAlive());
        assertFalse(backend.get(OP).orElseThrow().open(), "the late trial success closed it");
    }
}
