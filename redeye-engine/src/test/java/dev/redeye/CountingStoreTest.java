package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreOperation;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CountingStoreTest {

    @Test
    void countsEveryOperationAndForwardsCapabilitiesAtomically() throws Exception {
        InMemoryStore backend = new InMemoryStore();
        List<String> seen = new CopyOnWriteArrayList<>();
        CountingStore a = new CountingStore(backend.newClient(),
                (op, key, token) -> seen.add(op + ":" + (token != null)));
        CountingStore b = new CountingStore(backend.newClient());
        Policy p = Policy.builder().failureThreshold(1_000_000).build();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        for (int t = 0; t < 4; t++) {
            CountingStore s = t % 2 == 0 ? a : b;
            pool.submit(() -> {
                AtomicUpdates r = s.capability(AtomicUpdates.class).orElseThrow();
                for (int i = 0; i < 500; i++) {
                    r.apply("k", AtomicOperation.failure(), p, i);
                }
            });
        }
        pool.shutdown();
        assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        assertEquals(2000, a.get("k").orElseThrow().failures(), "forwarded capability stays atomic");
        assertEquals(1000, a.countOf(AtomicOperation.Kind.FAILURE));
        assertEquals(1000, b.snapshot().get(StoreOperation.UPDATE));
        assertEquals(1, a.snapshot().reads());

        TrialClaims claims = a.capability(TrialClaims.class).orElseThrow();
        Optional<String> token = claims.claimTrial("k", 1, Duration.ofMinutes(1));
        assertTrue(claims.claimTrial("k", 1, Duration.ofMinutes(1)).isEmpty());
        claims.releaseTrial("k", token.orElseThrow());
        assertTrue(seen.containsAll(List.of("CLAIM_TRIAL:true", "CLAIM_TRIAL:false", "RELEASE_TRIAL:true")), seen.toString());
        assertEquals(2, a.snapshot().get(StoreOperation.CLAIM_TRIAL));
        assertEquals(1004, a.snapshot().total(), "1000 failures, 1 read, 2 claims, 1 release");
        assertEquals(0, a.snapshot().minus(a.snapshot()).total());

        Store plain = new Store() {
            @Override public Optional<BreakerState> get(String key) { return Optional.empty(); }
            @Override public void put(String key, BreakerState state, Duration ttl) { }
            @Override public void delete(String key) { }
            @Override public void close() { }
        };
        assertTrue(new CountingStore(plain).capability(AtomicUpdates.class).isEmpty(),
                "a capability the wrapped store lacks stays absent");
        assertTrue(new CountingStore(plain).capability(OperationListing.class).isEmpty());

        CountingStore.Counts before = a.snapshot();
        OperationListing.Page page = a.capability(OperationListing.class).orElseThrow().page(null, 10);
        assertEquals(List.of("k"), page.entries().stream().map(OperationListing.Entry::operation).toList());
        CountingStore.Counts listed = a.snapshot().minus(before);
        assertEquals(1, listed.get(StoreOperation.LIST_PAGE));
        assertEquals(1, listed.reads(), "a page of a listing is a read");
        assertEquals(0, listed.writes());
        a.close();
        b.close();
        backend.close();
    }
}
