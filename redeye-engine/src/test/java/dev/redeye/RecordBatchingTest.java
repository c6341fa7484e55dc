package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.InvalidOptionException;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreOperation;
import dev.redeye.spi.support.ForwardingStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Write batching ({@code recordBatching}): outcomes reach the store as batches, at most {@code maxDelay} after
 * their first outcome, at once when full or when a failure would open the breaker, before this instance's reads
 * and manual changes, and on close; the option is checked and needs a store with {@link OutcomeBatches}.
 */
class RecordBatchingTest extends BreakersOverInMemoryStore {
    private static final String OP = "batched";
    private static final Duration DELAY = Duration.ofMillis(200);

    private CountingStore counting() {
        return new CountingStore(backend.newClient());
    }

    private CircuitBreakerBuilder errorRate(Store store) {
        return CircuitBreaker.builder().store(store).clock(clock).ticker(clock).strategy(Strategy.ERROR_RATE)
                .minimumCalls(10).errorRateThreshold(0.5).jitter(0).recordBatching(DELAY);
    }

    private static OutcomeBatcher batcher(CircuitBreaker b) {
        return b.parts().recorder.batcher();
    }

    @Test
    void theOptionIsCheckedAndNeedsAStoreWithOutcomeBatches() {
        for (Duration bad : List.of(Duration.ZERO, Duration.ofNanos(1), Duration.ofMillis(-1),
                Duration.ofSeconds(10).plusMillis(1))) {
            InvalidOptionException e = assertThrows(InvalidOptionException.class,
                    () -> CircuitBreaker.builder().recordBatching(bad));
            assertEquals("recordBatching", e.option());
        }
        assertThrows(InvalidOptionException.class, () -> CircuitBreaker.builder().recordBatching(null));
        InvalidOptionException local = assertThrows(InvalidOptionException.class,
                () -> CircuitBreaker.builder().recordBatching(DELAY).build());
        assertTrue(local.getMessage().contains("shared store"), local.getMessage());
        Store hiding = new ForwardingStore(backend.newClient()) {
            @Override
            public <C> Optional<C> capability(Class<C> type) {
                return type == OutcomeBatches.class ? Optional.empty() : super.capability(type);
            }
        };
        InvalidOptionException lacking = assertThrows(InvalidOptionException.class,
                () -> CircuitBreaker.builder().store(hiding).recordBatching(DELAY).build());
        assertEquals("recordBatching", lacking.option());
        assertTrue(lacking.getMessage().contains("OutcomeBatches"), lacking.getMessage());
        hiding.close();
        try (CircuitBreaker ok = CircuitBreaker.builder().store(backend.newClient())
                .recordBatching(Duration.ofSeconds(10)).build()) {
            assertEquals(Optional.of(Duration.ofSeconds(10)), ok.config().recordBatching());
            assertFalse(batcher(ok).sweeping(), "no thread before the first outcome");
        }
        try (CircuitBreaker off = CircuitBreaker.builder().store(backend.newClient()).build()) {
            assertEquals(Optional.empty(), off.config().recordBatching());
            assertEquals(null, off.parts().recorder.batcher());
        }
    }

    @Test
    void outcomesAreWrittenAsOneBatchOnceTheDelayPassed() {
        CountingStore store = counting();
        CircuitBreaker b = keep(errorRate(store));
        for (int i = 0; i < 100; i++) {
            b.execute(OP, () -> "ok");
        }
        assertEquals(0, store.snapshot().writes(), "held: nothing written yet");
        assertTrue(batcher(b).sweeping(), "the sweeping thread started with the first batch");
        clock.advance(DELAY.minusMillis(DELAY.toMillis() / 8 + 1));
        batcher(b).sweep();
        assertEquals(0, store.snapshot().writes(), "not due before the delay less one sweep period");
        clock.advance(Duration.ofMillis(DELAY.toMillis() / 8 + 1));
        batcher(b).sweep();
        assertEquals(1, store.countOf(AtomicOperation.Kind.OUTCOMES), "one batch");
        assertEquals(1, store.snapshot().writes());
        BreakerState s = backend.get(OP).orElseThrow();
        assertEquals(100, s.samples(), "every outcome is in the state");
        batcher(b).sweep();
        assertEquals(1, store.snapshot().writes(), "an empty batch writes nothing");
    }

    @Test
    void theOutcomesOfEachBatchCarryTheirOwnInstants() {
        CircuitBreaker b = keep(CircuitBreaker.builder().store(backend.newClient()).clock(clock).ticker(clock)
                .failureThreshold(100).jitter(0).recordBatching(DELAY));
        long t0 = clock.millis();
        assertThrows(IllegalStateException.class, () -> b.execute(OP, () -> {
            throw new IllegalStateException("down");
        }));
        clock.advanceMillis(50);
        assertThrows(IllegalStateException.class, () -> b.execute(OP, () -> {
            throw new IllegalStateException("down");
        }));
        clock.advance(DELAY);
        batcher(b).sweep();
        BreakerState s = backend.get(OP).orElseThrow();
        assertEquals(2, s.failures());
        assertEquals(t0 + 50, s.lastFailureAt(), "the instant of the last failure, not of the write");
    }

    @Test
    void aFailureThatWouldOpenTheBreakerIsWrittenAtOnce() {
        CountingStore store = counting();
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        CircuitBreaker b = keep(CircuitBreaker.builder().store(store).clock(clock).ticker(clock).failureThreshold(3)
                .jitter(0).recordBatching(DELAY).onStateChange(events::add));
        for (int i = 0; i < 2; i++) {
            assertThrows(IllegalStateException.class, () -> b.execute(OP, () -> {
                throw new IllegalStateException("down");
            }));
        }
        assertEquals(0, store.snapshot().writes(), "two failures of three: held");
        assertThrows(IllegalStateException.class, () -> b.execute(OP, () -> {
            throw new IllegalStateException("down");
        }));
        assertEquals(1, store.snapshot().writes(), "the third would open: written at once, without waiting");
        assertTrue(backend.get(OP).orElseThrow().open());
        assertEquals(List.of(TransitionKind.OPENED), events.stream().map(TransitionEvent::kind).toList());
        assertEquals(BreakerStatus.OPEN, b.localStatus(OP), "this instance rejects from its own write");
    }

    @Test
    void theCheckFoldsTheBatchOverTheStateTheCallWasAdmittedUnder() {
        // another instance's failures are in the store: this instance's own two would not open alone
        CircuitBreaker other = keep(CircuitBreaker.builder().store(backend.newClient()).clock(clock).ticker(clock)
                .failureThreshold(4).jitter(0));
        other.recordFailure(OP);
        other.recordFailure(OP);
        CountingStore store = counting();
        CircuitBreaker b = keep(CircuitBreaker.builder().store(store).clock(clock).ticker(clock).failureThreshold(4)
                .jitter(0).recordBatching(DELAY));
        assertThrows(IllegalStateException.class, () -> b.execute(OP, () -> {
            throw new IllegalStateException("down");
        }));
        assertEquals(0, store.countOf(StoreOperation.UPDATE), "2 known + 1 held: held");
        assertThrows(IllegalStateException.class, () -> b.execute(OP, () -> {
            throw new IllegalStateException("down");
        }));
        assertEquals(1, store.countOf(StoreOperation.UPDATE), "2 known + 2 held reach the threshold: written");
        assertTrue(backend.get(OP).orElseThrow().open());
    }

    @Test
    void aFullBatchIsWrittenAtOnce() {
        CountingStore store = counting();
        CircuitBreaker b = keep(errorRate(store));
        for (int i = 0; i < AtomicOperation.MAX_BATCH * 2 + 5; i++) {
            b.execute(OP, () -> "ok");
        }
        assertEquals(2, store.countOf(AtomicOperation.Kind.OUTCOMES), "two full batches");
        assertEquals(AtomicOperation.MAX_BATCH * 2, backend.get(OP).orElseThrow().samples());
    }

    @Test
    void readsAndManualChangesOfThisInstanceSeeItsOwnOutcomes() {
        CircuitBreaker b = keep(errorRate(backend.newClient()));
        b.execute(OP, () -> "ok");
        assertEquals(1, b.state(OP).samples(), "state() writes the batch first");
        b.execute(OP, () -> "ok");
        assertEquals(2, b.storedState(OP).orElseThrow().samples(), "storedState() too");
        b.execute(OP, () -> "ok");
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
        assertEquals(3, backend.get(OP).orElseThrow().samples(), "status() too");
        b.execute(OP, () -> "ok");
        assertTrue(b.check(OP));
        assertEquals(4, backend.get(OP).orElseThrow().samples(), "check() too");
        b.execute(OP, () -> "ok");
        b.recordFailure(OP); // a manual outcome: after the held ones
        assertEquals(6, backend.get(OP).orElseThrow().samples());
        b.execute(OP, () -> "ok");
        b.forceOpen(OP); // the held outcome is written before the operator's change
        BreakerState forced = backend.get(OP).orElseThrow();
        assertTrue(forced.forced());
        assertEquals(7, forced.samples());
        b.reset(OP);
        b.execute(OP, () -> "ok");
        b.forceMode(OP, BreakerMode.METRICS_ONLY);
        assertEquals(0, backend.get(OP).orElseThrow().samples(), "written, then the mode's reset");
        b.execute(OP, () -> "ok");
        b.forceHalfOpen(OP);
        assertEquals(1, backend.get(OP).orElseThrow().samples());
    }

    @Test
    void closingWritesEveryBatchHeld() {
        CircuitBreaker b = errorRate(backend.newClient()).closeStore(true).build();
        for (int i = 0; i < 7; i++) {
            b.execute(OP, () -> "ok");
            b.execute(OP + "-2", () -> "ok");
        }
        b.close();
        assertEquals(7, backend.get(OP).orElseThrow().samples());
        assertEquals(7, backend.get(OP + "-2").orElseThrow().samples());
    }

    @Test
    void anEvictedOperationsBatchIsWritten() {
        CircuitBreaker b = keep(errorRate(backend.newClient()).maxOperations(1));
        b.execute(OP, () -> "ok");
        for (int i = 0; i < 20; i++) {
            b.execute(OP + i, () -> "ok"); // evicts the least recently used
        }
        assertFalse(b.holds(OP));
        assertEquals(1, backend.get(OP).orElseThrow().samples(), "written when evicted");
    }

    @Test
    void aBatchTheStoreFailsToWriteIsReportedAndDroppedNeverThrown() {
        SpyStore spy = SpyStore.over(backend);
        List<String> errors = new CopyOnWriteArrayList<>();
        CircuitBreaker b = keep(errorRate(spy).onStoreError((op, t) -> errors.add(op)));
        for (int i = 0; i < 5; i++) {
            b.execute(OP, () -> "ok");
        }
        spy.failWrites = true;
        clock.advance(DELAY);
        batcher(b).sweep();
        assertEquals(List.of(OP), errors, "reported once, for the batch");
        assertEquals(1, b.metrics(OP).storeErrors());
        spy.failWrites = false;
        b.execute(OP, () -> "ok");
        clock.advance(DELAY);
        batcher(b).sweep();
        assertEquals(1, backend.get(OP).orElseThrow().samples(), "the failed batch is not retried");
    }

    @Test
    void aHealthyConsecutiveSuccessWithBatchedFailuresHeldIsBatchedToo() {
        CircuitBreaker b = keep(CircuitBreaker.builder().store(backend.newClient()).clock(clock).ticker(clock)
                .failureThreshold(5).jitter(0).recordBatching(DELAY));
        assertThrows(IllegalStateException.class, () -> b.execute(OP, () -> {
            throw new IllegalStateException("down");
        }));
        b.execute(OP, () -> "ok"); // the store holds no failure yet, but the batch does: the success clears it
        clock.advance(DELAY);
        batcher(b).sweep();
        assertEquals(0, backend.get(OP).orElseThrow().failures(), "as one by one: the success cleared the failure");
        b.execute(OP, () -> "ok");
        assertFalse(OutcomeBatcher.holds(b.parts().operations.peek(OP)), "nothing to clear: nothing held");
    }

    @Test
    void trialOutcomesAreNeverBatched() {
        CountingStore store = counting();
        CircuitBreaker b = keep(CircuitBreaker.builder().store(store).clock(clock).ticker(clock).failureThreshold(1)
                .resetTimeout(Duration.ofSeconds(1)).jitter(0).recordBatching(DELAY));
        assertThrows(IllegalStateException.class, () -> b.execute(OP, () -> {
            throw new IllegalStateException("down");
        }));
        assertTrue(backend.get(OP).orElseThrow().open());
        clock.advance(Duration.ofSeconds(2));
        assertEquals("ok", b.execute(OP, () -> "ok"), "the trial");
        assertEquals(BreakerStatus.CLOSED, b.status(OP), "the trial's success was written at once");
        assertEquals(1, store.countOf(AtomicOperation.Kind.TRIAL_SUCCESS));
    }

    @Test
    void concurrentCallersLoseNoOutcome() throws Exception {
        CircuitBreaker b = keep(CircuitBreaker.builder().store(backend.newClient()).clock(clock).ticker(clock)
                .slidingWindow(SlidingWindowType.TIME_BASED, 60).minimumNumberOfCalls(1_000_000)
                .recordBatching(DELAY));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        int perThread = 5_000;
        for (int t = 0; t < 8; t++) {
            int id = t;
            pool.submit(() -> {
                for (int i = 0; i < perThread; i++) {
                    if ((i + id) % 7 == 0) {
                        try {
                            b.execute(OP, () -> {
                                throw new IllegalStateException("down");
                            });
                        } catch (IllegalStateException expected) {
                            // the call's own failure
                        }
                    } else {
                        b.execute(OP, () -> "ok");
                    }
                    if (i % 997 == 0) {
                        batcher(b).sweep();
                        clock.advanceMillis(1);
                    }
                }
                return null;
            });
        }
        pool.shutdown();
        assertTrue(pool.awaitTermination(60, TimeUnit.SECONDS));
        BreakerState s = b.state(OP);
        assertEquals(8 * perThread, s.window().calls(), "every outcome is in the window, once");
    }
}
