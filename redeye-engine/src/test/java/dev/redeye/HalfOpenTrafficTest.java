package dev.redeye;

import static dev.redeye.LocalModeTest.rejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Point 3: callers that lose the trial claim are served from the open view with zero store operations until
 * the winner's outcome is known (this instance's own write, or a feed event with a higher version) or the
 * winner's claim could have expired (trialTimeout after the lost claim). Counted with {@link CountingStore}.
 */
class HalfOpenTrafficTest extends BreakersOverInMemoryStore {
    private static final String OP = "recovering";
    private CircuitBreaker build(CountingStore store, boolean localCache) {
        CircuitBreakerBuilder b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofSeconds(10)).trialTimeout(Duration.ofSeconds(8))
                .openCacheRefresh(Duration.ofSeconds(1)).store(store);
        if (localCache) {
            b.localCache(Duration.ofSeconds(1));
        }
        CircuitBreaker cb = b.build();
        breakers.add(cb);
        return cb;
    }

    /** Two breakers without the local cache, the operation open, A's trial running (pending). */
    private static final class Fleet {
        CountingStore sa;
        CountingStore sb;
        CircuitBreaker a;
        CircuitBreaker b;
        final CompletableFuture<String> trial = new CompletableFuture<>();
        CompletableFuture<String> result;
    }

    private Fleet trialRunningOnA() {
        Fleet f = new Fleet();
        f.sa = new CountingStore(backend.newClient());
        f.sb = new CountingStore(backend.newClient());
        f.a = build(f.sa, false);
        f.b = build(f.sb, false);
        failOnce(f.a);
        clock.advance(Duration.ofSeconds(10));
        f.result = f.a.executeAsync(OP, () -> f.trial);
        return f;
    }

    private static void failOnce(CircuitBreaker b) {
        try {
            b.execute(OP, () -> {
                throw new IOException("down");
            });
        } catch (IOException expected) {
            // opens
        }
    }

    @Test
    void losersCostNothingUntilTheClaimCouldHaveExpired() throws Exception {
        Fleet f = trialRunningOnA();
        assertFalse(f.result.isDone(), "A runs the trial");

        assertEquals(BreakerStatus.HALF_OPEN, rejected(f.b, OP).status(), "b loses the claim");
        CountingStore.Counts bAfterLoss = f.sb.snapshot();
        CountingStore.Counts aDuringTrial = f.sa.snapshot();
        for (int i = 0; i < 70; i++) { // 7 s of virtual time, past openCacheRefresh, short of trialTimeout (8 s)
            assertEquals(BreakerStatus.HALF_OPEN, rejected(f.b, OP).status());
            assertEquals(BreakerStatus.HALF_OPEN, rejected(f.a, OP).status());
            clock.advanceMillis(100);
        }
        assertEquals(0, f.sb.snapshot().minus(bAfterLoss).total(), "store operations of b's rejected calls");
        assertEquals(0, f.sa.snapshot().minus(aDuringTrial).total(), "store operations of a's rejected calls");

        f.trial.complete("recovered");
        assertEquals("recovered", f.result.get(5, TimeUnit.SECONDS));
        assertEquals("ok", f.a.execute(OP, () -> "ok"), "a knows the outcome from its own write");
        rejected(f.b, OP); // f.b has no feed: it cannot know before the winner's claim could have expired
        assertEquals(0, f.sb.snapshot().minus(bAfterLoss).total());
        clock.advance(Duration.ofSeconds(1)); // trialTimeout after f.b's lost claim
        assertEquals("ok", f.b.execute(OP, () -> "ok"), "b re-reads once its hold ran out and sees the close");
        assertEquals(1, f.sb.snapshot().minus(bAfterLoss).reads());
    }

    @Test
    void aFeedEventWithTheOutcomeEndsTheHoldAtOnce() throws Exception {
        CountingStore sa = new CountingStore(backend.newClient());
        CountingStore sb = new CountingStore(backend.newClient());
        CircuitBreaker a = build(sa, true);
        CircuitBreaker b = build(sb, true);
        CountDownLatch opened = probes.probe(1, 0);
        failOnce(a);
        FeedProbes.await(opened);
        clock.advance(Duration.ofSeconds(10));
        CompletableFuture<String> trial = new CompletableFuture<>();
        CompletableFuture<String> result = a.executeAsync(OP, () -> trial);
        rejected(b, OP);
        CountingStore.Counts bAfterLoss = sb.snapshot();
        for (int i = 0; i < 10; i++) {
            rejected(b, OP);
        }
        CountDownLatch closed = probes.probe(1, 0);
        trial.complete("recovered");
        result.get(5, TimeUnit.SECONDS);
        FeedProbes.await(closed);
        assertEquals("ok", b.execute(OP, () -> "ok"), "the feed event of the close ends b's hold");
        assertEquals(0, sb.snapshot().minus(bAfterLoss).total(), "and b learned it without a store operation");
    }

    @Test
    void aLostClaimAfterAFailedTrialReopensIsNotHeldBeyondTheNewPeriod() {
        Fleet f = trialRunningOnA();
        rejected(f.b, OP);
        f.trial.completeExceptionally(new IOException("still down"));
        assertTrue(f.result.isCompletedExceptionally());
        assertEquals(BreakerStatus.OPEN, rejected(f.a, OP).status(), "a's own write: reopened");
        assertEquals(Duration.ofSeconds(20), rejected(f.a, OP).retryAfter().orElseThrow());
        clock.advance(Duration.ofSeconds(8)); // f.b's hold runs out; f.b reads the reopened state
        assertEquals(BreakerStatus.OPEN, rejected(f.b, OP).status());
        assertEquals(Duration.ofSeconds(12), rejected(f.b, OP).retryAfter().orElseThrow());
    }
}
