package dev.redeye.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.CountingStore;
import dev.redeye.InMemoryStore;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import org.junit.jupiter.api.Test;

/**
 * The store decorators the distributed benchmarks stack: the engine's {@link CountingStore} over a store or over
 * {@link BestEffortStore}, which must keep (or hide) exactly the capabilities the tables claim.
 */
class DecoratorsTest {
    private static final Policy NEVER_OPENS = Policy.builder().failureThreshold(Integer.MAX_VALUE).build();

    @Test
    void aCapabilityTheWrappedStoreLacksStaysAbsent() {
        try (InMemoryStore memory = new InMemoryStore()) {
            CountingStore store = new CountingStore(new BestEffortStore(memory.newClient()));
            assertFalse(store.capability(AtomicUpdates.class).isPresent());
            assertFalse(store.capability(TrialClaims.class).isPresent());
            assertFalse(store.capability(AtomicUpdates.class).isPresent());
            assertFalse(store.capability(TransitionFeed.class).isPresent());
        }
    }

    /** A decorator that served get-then-put instead of forwarding the atomic capability would lose counts here. */
    @Test
    void forwardedRecordingStaysAtomicUnderEightThreadsOverTwoClients() throws Exception {
        try (InMemoryStore memory = new InMemoryStore()) {
            AtomicUpdates[] clients = {
                new CountingStore(memory.newClient()).capability(AtomicUpdates.class).orElseThrow(),
                new CountingStore(memory.newClient()).capability(AtomicUpdates.class).orElseThrow()
            };
            CyclicBarrier start = new CyclicBarrier(8);
            List<Thread> threads = new ArrayList<>();
            List<Throwable> errors = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                AtomicUpdates r = clients[i % 2];
                Thread t = new Thread(() -> {
                    try {
                        start.await();
                        for (int k = 0; k < 500; k++) {
                            r.apply("op", AtomicOperation.failure(), NEVER_OPENS, 1_000 + k);
                        }
                    } catch (Throwable e) {
                        synchronized (errors) {
                            errors.add(e);
                        }
                    }
                });
                threads.add(t);
                t.start();
            }
            Load.joinAll(threads);
            assertTrue(errors.isEmpty(), () -> "a thread failed: " + errors);
            assertEquals(4_000, memory.get("op").orElseThrow().failures());
        }
    }

    @Test
    void aBreakerOverTheCountingStoreReadsOnceAndWritesNothingPerHealthyCall() {
        try (InMemoryStore memory = new InMemoryStore()) {
            CountingStore store = new CountingStore(memory.newClient());
            try (CircuitBreaker breaker = CircuitBreaker.builder().store(store).build()) {
                CountingStore.Counts before = store.snapshot();
                for (int i = 0; i < 100; i++) {
                    breaker.execute("op", Load.HEALTHY);
                }
                CountingStore.Counts d = store.snapshot().minus(before);
                assertEquals(100, d.reads());
                assertEquals(0, d.writes());
            }
        }
    }

    @Test
    void bestEffortStoreForwardsThePlainMethodsAndHidesEveryCapability() {
        try (InMemoryStore memory = new InMemoryStore()) {
            Store plain = new BestEffortStore(memory.newClient());
            BreakerState s = BreakerState.builder().failures(3).build();
            plain.put("k", s, Duration.ofMinutes(1));
            assertEquals(s, memory.get("k").orElseThrow());
            assertEquals(s, plain.get("k").orElseThrow());
            plain.delete("k");
            assertTrue(memory.get("k").isEmpty());
            assertTrue(memory.capability(AtomicUpdates.class).isPresent(), "the wrapped store has it");
            assertFalse(plain.capability(AtomicUpdates.class).isPresent());
            assertFalse(plain.capability(TransitionFeed.class).isPresent());
        }
    }

    @Test
    void aNullDelegateIsRejected() {
        assertThrows(NullPointerException.class, () -> new BestEffortStore(null));
    }
}
