package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * What {@link InMemoryStore} does beyond the TCK (which store-tck runs over it whole): the bounded feed
 * queue, the sweep that bounds memory, the version floor and ttl edge cases. Expiry is real time with
 * ttls of tens of milliseconds; every wait polls for the condition and ends as soon as it holds.
 */
class InMemoryStoreTest {
    private static final Policy SHORT = Policy.builder().failureThreshold(1).resetTimeout(Duration.ofMillis(5))
            .maxResetTimeout(Duration.ofMillis(5)).stateTtl(Duration.ofMillis(40)).jitter(0).build();

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + " did not happen within 10 s");
            }
            Thread.sleep(5);
        }
    }

    @Test
    void aFullFeedQueueDropsEventsAndSignalsAGapToEverySubscriber() throws Exception {
        try (InMemoryStore store = new InMemoryStore(8, InMemoryStore.DEFAULT_SWEEP_INTERVAL)) {
            CountDownLatch blocked = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            List<Long> slow = new CopyOnWriteArrayList<>();
            List<Long> other = new CopyOnWriteArrayList<>();
            AtomicInteger slowGaps = new AtomicInteger();
            AtomicInteger otherGaps = new AtomicInteger();
            store.subscribe(e -> {
                slow.add(e.version());
                blocked.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }, slowGaps::incrementAndGet);
            store.subscribe(e -> other.add(e.version()), otherGaps::incrementAndGet);
            Policy p = Policy.builder().jitter(0).build();
            store.apply("op", AtomicOperation.force(BreakerStatus.HALF_OPEN), p, 1);
            assertTrue(blocked.await(10, TimeUnit.SECONDS), "the first event reaches the slow subscriber");
            for (int i = 0; i < 30; i++) { // 8 fit in the queue, the rest are dropped
                store.apply("op", AtomicOperation.force(i % 2 == 0 ? BreakerStatus.CLOSED : BreakerStatus.HALF_OPEN), p, 2 + i);
            }
            assertEquals(0, slowGaps.get() + otherGaps.get(), "no gap while the feed thread is blocked");
            release.countDown();
            await(() -> slowGaps.get() == 1 && otherGaps.get() == 1, "onGap on both subscribers");
            await(() -> other.size() == 9, "the 9 events that were not dropped");
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L), other, "delivered in version order");
            long last = store.get("op").orElseThrow().version();
            store.apply("op", AtomicOperation.force(BreakerStatus.CLOSED), p, 100);
            await(() -> other.contains(last + 1), "delivery after the overflow");
            assertEquals(1, otherGaps.get(), "one gap per overflow");
        }
    }

    @Test
    void versionsNeverGoBackwardsAcrossDeleteAndExpiry() throws Exception {
        try (InMemoryStore store = new InMemoryStore()) {
            assertEquals(0, store.apply("fresh", AtomicOperation.failure(), Policy.defaults(), 1).state().version(),
                    "a fresh store starts keys at version 0");
            StateChange opened = store.apply("k", AtomicOperation.failure(), SHORT, 1);
            assertEquals(1, opened.state().version());
            store.apply("k", AtomicOperation.force(BreakerStatus.CLOSED), SHORT, 2);
            store.delete("k");
            StateChange reborn = store.apply("k", AtomicOperation.failure(), SHORT, 3);
            assertEquals(BreakerState.initial(3), reborn.previous(), "a new life starts above the deleted version");
            assertEquals(4, reborn.state().version());
            store.put("high", BreakerState.INITIAL.withVersion(40), Duration.ofMillis(20));
            await(() -> store.get("high").isEmpty(), "expiry of a put with a 20 ms ttl");
            assertNotNull(store.peek("high"), "peek reads no clock: the expired state is still held");
            assertEquals(BreakerState.initial(41), store.apply("high", AtomicOperation.success(), SHORT, 4).previous(),
                    "an expired state raises the floor, also for a call that writes nothing");
            assertNull(store.peek("high"), "an atomic operation drops the expired state");
            assertEquals(42, store.apply("other", AtomicOperation.failure(), SHORT, 5).state().version(),
                    "the floor is store-wide: every new life starts above it");
        }
    }

    @Test
    void atomicWritesRefreshTheTtlAndForcedStatesNeverExpire() throws Exception {
        try (InMemoryStore store = new InMemoryStore()) {
            store.apply("held", AtomicOperation.force(BreakerStatus.FORCED_OPEN), SHORT, 1);
            store.put("put-held", BreakerState.builder().open(true).forced(true).build(), Duration.ofMillis(10));
            store.apply("plain", AtomicOperation.failure(), Policy.builder().failureThreshold(100).resetTimeout(Duration.ofMillis(5))
                    .maxResetTimeout(Duration.ofMillis(5)).stateTtl(Duration.ofMillis(40)).build(), 1);
            await(() -> store.get("plain").isEmpty(), "expiry of a state written by an atomic operation");
            assertTrue(store.get("held").orElseThrow().forced(), "a forced state outlives stateTtl");
            assertTrue(store.get("put-held").orElseThrow().forced(), "a forced put outlives its ttl");
            store.put("forever", BreakerState.INITIAL, Duration.ofSeconds(Long.MAX_VALUE));
            assertTrue(store.get("forever").isPresent(), "a huge ttl never expires and does not overflow");
            assertThrows(IllegalArgumentException.class, () -> store.put("x", BreakerState.INITIAL, Duration.ZERO));
            assertThrows(NullPointerException.class, () -> store.put("x", BreakerState.INITIAL, null));
        }
    }

    @Test
    void aSweepReclaimsExpiredStatesAndClaimsOfKeysNoLongerWritten() throws Exception {
        try (InMemoryStore store = new InMemoryStore(16, Duration.ofMillis(10))) {
            for (int i = 0; i < 200; i++) {
                store.put("s" + i, BreakerState.INITIAL.withVersion(i), Duration.ofMillis(20));
                store.claimTrial("c" + i, 1, Duration.ofMillis(20));
                store.apply("n" + i, AtomicOperation.success(), SHORT, 1); // writes nothing: leaves at most an empty entry
            }
            store.apply("kept", AtomicOperation.force(BreakerStatus.FORCED_OPEN), SHORT, 1);
            String live = store.claimTrial("live", 1, Duration.ofMinutes(5)).orElseThrow();
            Thread.sleep(40);
            await(() -> {
                store.put("writer", BreakerState.INITIAL, Duration.ofMinutes(5)); // writes trigger the sweep
                return store.keyCount() == 3;
            }, "the sweep leaving only the forced state, the live claim and the writer");
            assertTrue(store.get("kept").isPresent());
            assertFalse(store.claimTrial("live", 1, Duration.ofMinutes(5)).isPresent(), "the live claim is kept");
            store.releaseTrial("live", live);
            assertEquals(200, store.apply("s0", AtomicOperation.failure(), SHORT, 2).previous().version(),
                    "swept states raised the floor: a new life starts above the highest");
        }
    }

    @Test
    void eventsOfOneKeyAreDeliveredInVersionOrderUnderConcurrentWriters() throws Exception {
        try (InMemoryStore store = new InMemoryStore()) {
            List<TransitionEvent> seen = new CopyOnWriteArrayList<>();
            store.subscribe(seen::add, () -> { });
            Thread[] writers = new Thread[4];
            for (int t = 0; t < writers.length; t++) {
                writers[t] = new Thread(() -> {
                    for (int i = 0; i < 250; i++) {
                        store.apply("op", AtomicOperation.force(i % 2 == 0 ? BreakerStatus.HALF_OPEN : BreakerStatus.CLOSED), Policy.defaults(), i);
                    }
                });
                writers[t].start();
            }
            for (Thread w : writers) {
                w.join();
            }
            await(() -> seen.size() == 1_000, "1,000 events");
            for (int i = 0; i < seen.size(); i++) {
                assertEquals(i + 1, seen.get(i).version(), "event " + i);
            }
        }
    }
}
