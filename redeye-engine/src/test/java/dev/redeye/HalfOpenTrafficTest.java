package dev.redeye;

import static dev.redeye.LocalModeTest.rejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.TransitionFeed;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Point 3: callers that lose the trial claim are served from the open view with zero store operations until
 * the winner's outcome is known (this instance's own write, or a feed event with a higher version) or the
 * winner's claim could have expired (trialTimeout after the lost claim). Counted with {@link CountingStore}.
 */
class HalfOpenTrafficTest {
    private static final String OP = "recovering";
    private final MutableClock clock = new MutableClock();
    private final InMemoryStore backend = new InMemoryStore();
    private final List<CircuitBreaker> breakers = new ArrayList<>();
    private final List<TransitionFeed.Subscription> probes = new ArrayList<>();

    @AfterEach
    void close() {
        probes.forEach(TransitionFeed.Subscription::close);
        breakers.forEach(CircuitBreaker::close);
        backend.close();
    }

    private CircuitBreaker build(CountingStore store, boolean localCache) {
        CircuitBreaker.Builder b = CircuitBreaker.builder().clock(clock).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofSeconds(10)).trialTimeout(Duration.ofSeconds(8))
                .openCacheRefresh(Duration.ofSeconds(1)).store(store);
        if (localCache) {
            b.localCache(Duration.ofSeconds(1));
        }
        CircuitBreaker cb = b.build();
        breakers.add(cb);
        return cb;
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
        CountingStore sa = new CountingStore(backend.newClient());
        CountingStore sb = new CountingStore(backend.newClient());
        CircuitBreaker a = build(sa, false);
        CircuitBreaker b = build(sb, false);
        failOnce(a);
        clock.advance(Duration.ofSeconds(10));
        CompletableFuture<String> trial = new CompletableFuture<>();
        CompletableFuture<String> result = a.executeAsync(OP, () -> trial);
        assertFalse(result.isDone(), "a runs the trial");

        assertEquals(BreakerStatus.HALF_OPEN, rejected(b, OP).status(), "b loses the claim");
        CountingStore.Counts bAfterLoss = sb.snapshot();
        CountingStore.Counts aDuringTrial = sa.snapshot();
        for (int i = 0; i < 70; i++) { // 7 s of virtual time, past openCacheRefresh, short of trialTimeout (8 s)
            assertEquals(BreakerStatus.HALF_OPEN, rejected(b, OP).status());
            assertEquals(BreakerStatus.HALF_OPEN, rejected(a, OP).status());
            clock.advanceMillis(100);
        }
        assertEquals(0, sb.snapshot().minus(bAfterLoss).total(), "store operations of b's rejected calls");
        assertEquals(0, sa.snapshot().minus(aDuringTrial).total(), "store operations of a's rejected calls");

        trial.complete("recovered");
        assertEquals("recovered", result.get(5, TimeUnit.SECONDS));
        assertEquals("ok", a.execute(OP, () -> "ok"), "a knows the outcome from its own write");
        rejected(b, OP); // b has no feed: it cannot know before the winner's claim could have expired
        assertEquals(0, sb.snapshot().minus(bAfterLoss).total());
        clock.advance(Duration.ofSeconds(1)); // trialTimeout after b's lost claim
        assertEquals("ok", b.execute(OP, () -> "ok"), "b re-reads once its hold ran out and sees the close");
        assertEquals(1, sb.snapshot().minus(bAfterLoss).reads());
    }

    @Test
    void aFeedEventWithTheOutcomeEndsTheHoldAtOnce() throws Exception {
        CountingStore sa = new CountingStore(backend.newClient());
        CountingStore sb = new CountingStore(backend.newClient());
        CircuitBreaker a = build(sa, true);
        CircuitBreaker b = build(sb, true);
        CountDownLatch opened = probe();
        failOnce(a);
        await(opened);
        clock.advance(Duration.ofSeconds(10));
        CompletableFuture<String> trial = new CompletableFuture<>();
        CompletableFuture<String> result = a.executeAsync(OP, () -> trial);
        rejected(b, OP);
        CountingStore.Counts bAfterLoss = sb.snapshot();
        for (int i = 0; i < 10; i++) {
            rejected(b, OP);
        }
        CountDownLatch closed = probe();
        trial.complete("recovered");
        result.get(5, TimeUnit.SECONDS);
        await(closed);
        assertEquals("ok", b.execute(OP, () -> "ok"), "the feed event of the close ends b's hold");
        assertEquals(0, sb.snapshot().minus(bAfterLoss).total(), "and b learned it without a store operation");
    }

    @Test
    void aLostClaimAfterAFailedTrialReopensIsNotHeldBeyondTheNewPeriod() {
        CountingStore sa = new CountingStore(backend.newClient());
        CountingStore sb = new CountingStore(backend.newClient());
        CircuitBreaker a = build(sa, false);
        CircuitBreaker b = build(sb, false);
        failOnce(a);
        clock.advance(Duration.ofSeconds(10));
        CompletableFuture<String> trial = new CompletableFuture<>();
        CompletableFuture<String> result = a.executeAsync(OP, () -> trial);
        rejected(b, OP);
        trial.completeExceptionally(new IOException("still down"));
        assertTrue(result.isCompletedExceptionally());
        assertEquals(BreakerStatus.OPEN, rejected(a, OP).status(), "a's own write: reopened");
        assertEquals(Duration.ofSeconds(20), rejected(a, OP).retryAfter());
        clock.advance(Duration.ofSeconds(8)); // b's hold runs out; b reads the reopened state
        assertEquals(BreakerStatus.OPEN, rejected(b, OP).status());
        assertEquals(Duration.ofSeconds(12), rejected(b, OP).retryAfter());
    }

    private CountDownLatch probe() {
        CountDownLatch latch = new CountDownLatch(1);
        probes.add(backend.subscribe(e -> latch.countDown(), () -> { }));
        return latch;
    }

    private static void await(CountDownLatch latch) throws InterruptedException {
        assertTrue(latch.await(10, TimeUnit.SECONDS), "feed delivery timed out");
    }
}
