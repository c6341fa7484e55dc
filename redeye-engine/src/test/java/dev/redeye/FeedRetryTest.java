package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A feed subscription that fails when the breaker is built is retried with backoff (on the engine's JVM-wide
 * timer, real time): the local cache turns on and {@code onFleetStateChange} starts hearing the fleet once it
 * succeeds; closing the breaker stops the retries.
 */
class FeedRetryTest {
    private static final String OP = "late-feed";
    private final InMemoryStore backend = new InMemoryStore();

    @AfterEach
    void close() {
        backend.close();
    }

    /** A client whose first {@code failures} subscriptions throw, like a stream not reachable yet. */
    static final class LateFeed extends ForwardingStore {
        final AtomicInteger failures;
        final AtomicInteger attempts = new AtomicInteger();

        LateFeed(Store client, int failures) {
            super(client);
            this.failures = new AtomicInteger(failures);
        }

        @Override
        public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
            attempts.incrementAndGet();
            if (failures.getAndDecrement() > 0) {
                throw new StoreException("stream not reachable yet (test)");
            }
            return super.subscribe(listener, onGap);
        }
    }

    private static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for: " + what);
            Thread.sleep(10); // the retry runs on the engine's timer, in real time
        }
    }

    @Test
    void aFirstSubscribeThatThrowsIsRetriedAndTheCacheAndFleetListenerStartWorking() throws Exception {
        LateFeed late = new LateFeed(backend.newClient(), 1);
        List<TransitionEvent> heard = new CopyOnWriteArrayList<>();
        try (CircuitBreaker b = CircuitBreaker.builder().store(late).localCache(Duration.ofSeconds(1))
                .onFleetStateChange(heard::add).build();
             CircuitBreaker other = CircuitBreaker.builder().store(backend.newClient()).failureThreshold(1)
                     .build()) {
            assertFalse(b.isLocalCacheActive(), "the first subscription failed");
            eventually("the retried subscription", b::isLocalCacheActive);
            assertEquals(2, late.attempts.get(), "one retry, then it held");
            other.forceOpen(OP);
            eventually("the fleet's transition", () -> !heard.isEmpty());
            assertEquals(TransitionKind.FORCED_OPEN, heard.get(0).kind());
        }
    }

    @Test
    void aFleetListenerAloneIsRetriedToo() throws Exception {
        LateFeed late = new LateFeed(backend.newClient(), 2);
        List<TransitionEvent> heard = new CopyOnWriteArrayList<>();
        try (CircuitBreaker b = CircuitBreaker.builder().store(late).onFleetStateChange(heard::add).build();
             CircuitBreaker other = CircuitBreaker.builder().store(backend.newClient()).build()) {
            eventually("two retries", () -> late.attempts.get() == 3);
            eventually("the fleet's transition", () -> {
                // until the subscription is up, the event may be missed: repeat, with a transition each time (a
                // second forceOpen would be a change already in force, which writes and publishes nothing)
                if (other.state(OP).open()) {
                    other.reset(OP);
                } else {
                    other.forceOpen(OP);
                }
                return !heard.isEmpty();
            });
            assertFalse(b.isLocalCacheActive(), "no local cache was asked for");
        }
    }

    @Test
    void closingTheBreakerStopsTheRetries() throws Exception {
        LateFeed never = new LateFeed(backend.newClient(), Integer.MAX_VALUE);
        CircuitBreaker b = CircuitBreaker.builder().store(never).localCache().build();
        eventually("a retry", () -> never.attempts.get() >= 2);
        b.close();
        Thread.sleep(100); // an attempt already running when close() came may still count
        int attempts = never.attempts.get();
        Thread.sleep(6 * FeedHandler.FIRST_RETRY_MILLIS); // longer than the next backoff step (2x, +-20%)
        assertEquals(attempts, never.attempts.get(), "no retry after close");
        assertFalse(b.isLocalCacheActive());
    }

    /**
     * A retry whose subscribe hangs (a connect waiting out its network timeout) runs off the engine's timer,
     * which also marks local open breakers due for a trial: a local breaker elsewhere in the JVM still recovers
     * after its window.
     */
    @Test
    void aRetryThatHangsDoesNotHoldUpOtherBreakersTimers() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger attempts = new AtomicInteger();
        Store hanging = new ForwardingStore(backend.newClient()) {
            @Override
            public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                if (attempts.incrementAndGet() == 1) {
                    throw new StoreException("stream not reachable yet (test)");
                }
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.subscribe(listener, onGap);
            }
        };
        try (CircuitBreaker distributed = CircuitBreaker.builder().store(hanging).followFeed(true).build();
             CircuitBreaker local = CircuitBreaker.builder().failureThreshold(1).resetTimeout(Duration.ofMillis(200))
                     .jitter(0).build()) {
            assertTrue(entered.await(10, TimeUnit.SECONDS), "the retry runs and hangs in subscribe");
            local.recordFailure("op");
            assertEquals("rejected", local.executeOrElse("op", () -> "ran", "rejected"));
            eventually("the local breaker admits a trial after its 200 ms window",
                    () -> "ran".equals(local.executeOrElse("op", () -> "ran", "rejected")));
        } finally {
            release.countDown();
        }
    }
}
