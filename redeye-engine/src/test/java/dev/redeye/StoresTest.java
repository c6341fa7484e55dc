package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.Store;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class StoresTest {

    @Test
    void plainMemoryUriOpensIndependentStores() {
        try (Store a = Stores.open("memory:"); Store b = Stores.open("memory:")) {
            assertInstanceOf(InMemoryStore.class, a);
            a.put("k", BreakerState.INITIAL.withVersion(3), Duration.ofMinutes(1));
            assertTrue(b.get("k").isEmpty());
        }
    }

    @Test
    void namedMemoryUriSharesOneBackendAcrossClients() {
        Store a = Stores.open("memory://stores-test-shared");
        Store b = Stores.open("MEMORY://stores-test-shared");
        assertNotSame(a, b);
        a.put("k", BreakerState.INITIAL.withVersion(5), Duration.ofMinutes(1));
        assertEquals(5, b.get("k").orElseThrow().version());
        a.close();
        assertThrows(StoreException.class, () -> a.get("k"));
        assertEquals(5, b.get("k").orElseThrow().version(), "closing one client leaves the others working");
        b.close();
        try (Store c = Stores.open("memory:stores-test-shared")) {
            assertEquals(5, c.get("k").orElseThrow().version(), "the named store outlives its clients");
        }
    }

    @Test
    void unknownSchemeListsWhatIsThereWithoutThePassword() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Stores.open("nosuch://user:hunter2@host/x"));
        assertTrue(e.getMessage().contains("memory"), e.getMessage());
        assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Stores.open(" "));
        assertThrows(IllegalArgumentException.class, () -> Stores.open("no-scheme"));
        assertTrue(Stores.schemes().contains("memory"));
    }

    @Test
    void deleteRemovesClaimsAndFeedReachesEveryClient() throws Exception {
        InMemoryStore backend = new InMemoryStore();
        Store one = backend.newClient();
        Store two = backend.newClient();
        List<TransitionEvent> seenByTwo = new CopyOnWriteArrayList<>();
        List<String> gaps = new CopyOnWriteArrayList<>();
        CountDownLatch delivered = new CountDownLatch(2);
        two.capability(dev.redeye.spi.TransitionFeed.class).orElseThrow().subscribe(e -> {
            seenByTwo.add(e);
            delivered.countDown();
        }, () -> {
            gaps.add("gap");
            delivered.countDown();
        });
        TrialClaims claims = one.capability(TrialClaims.class).orElseThrow();
        assertTrue(claims.claimTrial("k", 1, Duration.ofMinutes(1)).isPresent());
        assertTrue(claims.claimTrial("k", 1, Duration.ofMinutes(1)).isEmpty());
        one.delete("k");
        assertTrue(claims.claimTrial("k", 1, Duration.ofMinutes(1)).isPresent(), "delete freed the claim");

        Policy p = Policy.builder().failureThreshold(1).build();
        backend.apply("op", AtomicOperation.failure(), p, 10);
        backend.simulateFeedGap();
        assertTrue(delivered.await(10, TimeUnit.SECONDS), "the event and the gap reach the other client");
        assertEquals(1, seenByTwo.size());
        assertEquals("op", seenByTwo.get(0).operation());
        assertEquals(List.of("gap"), gaps);
        two.close();
        backend.close();
        assertThrows(StoreException.class, () -> one.get("k"));
        backend.close();
    }
}
