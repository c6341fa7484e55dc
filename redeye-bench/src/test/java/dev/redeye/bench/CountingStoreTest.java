package dev.redeye.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.InMemoryStore;
import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.Store;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.TrialClaims;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import org.junit.jupiter.api.Test;

class CountingStoreTest {
    private static final Policy NEVER_OPENS = Policy.builder().failureThreshold(Integer.MAX_VALUE).build();

    @Test
    void forwardsEveryCapabilityTheWrappedStoreHasAndCountsItsCalls() {
        try (InMemoryStore memory = new InMemoryStore()) {
            CountingStore store = new CountingStore(memory.newClient());
            AtomicRecording recording = store.capability(AtomicRecording.class).orElseThrow();
            TrialClaims claims = store.capability(TrialClaims.class).orElseThrow();
            assertTrue(store.capability(AtomicTransitions.class).isPresent());
            assertTrue(store.capability(TransitionFeed.class).isPresent());

            recording.recordFailure("op", NEVER_OPENS, 1_000);
            recording.recordOutcome("op", false, NEVER_OPENS, 1_001);
            Optional<String> token = claims.claimTrial("op", 1, Duration.ofSeconds(5));
            claims.releaseTrial("op", token.orElseThrow());
            store.get("op");
            store.put("other", BreakerState.INITIAL, Duration.ofMinutes(1));
            store.delete("other");

            CountingStore.Counts c = store.snapshot();
            assertEquals(1, c.get(CountingStore.Op.RECORD_FAILURE));
            assertEquals(1, c.get(CountingStore.Op.RECORD_OUTCOME));
            assertEquals(1, c.get(CountingStore.Op.CLAIM_TRIAL));
            assertEquals(1, c.get(CountingStore.Op.RELEASE_TRIAL));
            assertEquals(1, c.reads());
            assertEquals(4, c.writes()); // two recordings, put, delete
            assertEquals(7, c.total());
            assertEquals(2, memory.get("op").orElseThrow().failures(), "calls reach the wrapped store");
        }
    }

    @Test
    void aCapabilityTheWrappedStoreLacksStaysAbsent() {
        try (InMemoryStore memory = new InMemoryStore()) {
            CountingStore store = new CountingStore(new BestEffortStore(memory.newClient()));
            assertFalse(store.capability(AtomicRecording.class).isPresent());
            assertFalse(store.capability(TrialClaims.class).isPresent());
            assertFalse(store.capability(AtomicTransitions.class).isPresent());
            assertFalse(store.capability(TransitionFeed.class).isPresent());
        }
    }

    /** A decorator that served get-then-put instead of forwarding the atomic capability would lose counts here. */
    @Test
    void forwardedRecordingStaysAtomicUnderEightThreadsOverTwoClients() throws Exception {
        try (InMemoryStore memory = new InMemoryStore()) {
            AtomicRecording[] clients = {
                new CountingStore(memory.newClient()).capability(AtomicRecording.class).orElseThrow(),
                new CountingStore(memory.newClient()).capability(AtomicRecording.class).orElseThrow()
            };
            CyclicBarrier start = new CyclicBarrier(8);
            List<Thread> threads = new ArrayList<>();
            List<Throwable> errors = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                AtomicRecording r = clients[i % 2];
                Thread t = new Thread(() -> {
                    try {
                        start.await();
                        for (int k = 0; k < 500; k++) {
                            r.recordFailure("op", NEVER_OPENS, 1_000 + k);
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
            assertTrue(memory.capability(AtomicRecording.class).isPresent(), "the wrapped store has it");
            assertFalse(plain.capability(AtomicRecording.class).isPresent());
            assertFalse(plain.capability(TransitionFeed.class).isPresent());
        }
    }

    @Test
    void nullDelegatesAreRejected() {
        assertThrows(NullPointerException.class, () -> new CountingStore(null));
        assertThrows(NullPointerException.class, () -> new BestEffortStore(null));
    }
}
