package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.StoreException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@link CircuitBreaker#storedState(String)} and {@link CircuitBreaker#holds(String)} answer about an
 * operation without registering it: no entry, no observer told of a new operation (so no meters), nothing
 * written, in local mode, in distributed mode and under the LOCAL policy with the store down; whereas
 * {@link CircuitBreaker#state(String)} registers it.
 */
class ReadsWithoutRegisteringTest extends BreakersOverInMemoryStore {

    private CircuitBreaker track(CircuitBreaker b) {
        breakers.add(b);
        return b;
    }

    /** An observer that remembers which operations it was told of. */
    private static final class Added implements CircuitBreakerObserver {
        final List<String> names = new CopyOnWriteArrayList<>();

        @Override
        public void operationAdded(ObservedOperation operation) {
            names.add(operation.name());
        }
    }

    @Test
    void localModeReadsTheInProcessStateWithoutRegistering() {
        CircuitBreaker b = track(CircuitBreaker.builder().build());
        Added added = new Added();
        b.addObserver(added);
        b.forceOpen("known");

        assertEquals(Optional.empty(), b.storedState("made-up"));
        assertFalse(b.holds("made-up"));
        assertTrue(b.storedState("known").orElseThrow().forced());
        assertTrue(b.holds("known"));
        assertEquals(List.of("known"), added.names);
        assertEquals(List.of("known"), List.copyOf(b.allMetrics().keySet()));

        b.state("made-up"); // the registering read, for contrast
        assertTrue(b.holds("made-up"));
        assertEquals(List.of("known", "made-up"), added.names);
    }

    @Test
    void distributedModeReadsTheStoreOnceWithoutRegisteringOrWriting() {
        SpyStore store = SpyStore.over(backend);
        CircuitBreaker elsewhere = track(CircuitBreaker.builder().store(SpyStore.over(backend)).build());
        elsewhere.forceOpen("stored-elsewhere");
        CircuitBreaker b = track(CircuitBreaker.builder().store(store).build());
        Added added = new Added();
        b.addObserver(added);
        store.resetCounts();

        assertEquals(Optional.empty(), b.storedState("made-up"));
        BreakerState s = b.storedState("stored-elsewhere").orElseThrow();
        assertTrue(s.forced());
        assertEquals(2, store.reads.get());
        assertEquals(0, store.writes.get());
        assertFalse(b.holds("made-up"));
        assertFalse(b.holds("stored-elsewhere"));
        assertEquals(List.of(), added.names);
        assertTrue(b.allMetrics().isEmpty());
    }

    @Test
    void underTheLocalPolicyAFailingStoreFailsTheReadAndDegradesNothing() {
        SpyStore store = SpyStore.over(backend);
        CircuitBreaker b = track(CircuitBreaker.builder().store(store).storeErrorPolicy(StoreErrorPolicy.LOCAL)
                .build());
        store.failing = true;
        assertThrows(StoreException.class, () -> b.storedState("made-up"));
        assertFalse(b.holds("made-up"));
        assertTrue(b.allMetrics().isEmpty());
    }

    @Test
    void badNamesAndAClosedBreakerFailAsTheOtherMethodsDo() {
        CircuitBreaker b = track(CircuitBreaker.builder().build());
        assertThrows(NullPointerException.class, () -> b.storedState(null));
        assertThrows(NullPointerException.class, () -> b.holds(null));
        assertThrows(IllegalArgumentException.class, () -> b.storedState(""));
        b.close();
        assertThrows(IllegalStateException.class, () -> b.storedState("op"));
    }
}
