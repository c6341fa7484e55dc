package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreUnavailableException;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Point 2: a {@code claimTrial} that throws, whatever it throws (or answers null, as garbage under the claim
 * key can make a store do), is a store error under the policy: REJECT runs no call; ALLOW and LOCAL fall back
 * to the per-instance claim, so at most {@code halfOpenPermits} trials run per breaker at once, never every
 * caller. 16 real threads over two breakers race at eligibility; each trial holds until every caller decided.
 */
class ClaimErrorTest {
    private static final String OP = "claims-broken";
    private static final int CALLERS = 16;

    /** How the claim breaks. */
    private static Supplier<RuntimeException> failure(String kind) {
        switch (kind) {
            case "StoreException": return () -> new StoreException("garbage under the claim key");
            case "IllegalStateException": return () -> new IllegalStateException("pool closed");
            case "NullPointerException": return () -> new NullPointerException("driver bug");
            default: return null; // "null": the claim answers null instead of an Optional
        }
    }

    private static Store brokenClaims(Store client, String kind) {
        Supplier<RuntimeException> f = failure(kind);
        return new ForwardingStore(client) {
            @Override
            public Optional<String> claimTrial(String key, int permits, Duration ttl) {
                if (f == null) {
                    return null;
                }
                throw f.get();
            }
        };
    }

    @ParameterizedTest(name = "{0}, {1}, permits {2}")
    @CsvSource({
        "REJECT, StoreException, 1", "REJECT, IllegalStateException, 1", "REJECT, null, 2",
        "ALLOW, StoreException, 1", "ALLOW, NullPointerException, 2", "ALLOW, null, 1",
        "LOCAL, StoreException, 1", "LOCAL, IllegalStateException, 2"})
    void aThrowingClaimIsAStoreErrorUnderThePolicy(StoreErrorPolicy policy, String kind, int permits)
            throws Exception {
        MutableClock clock = new MutableClock();
        InMemoryStore backend = new InMemoryStore();
        List<CircuitBreaker> breakers = new ArrayList<>();
        AtomicInteger storeErrors = new AtomicInteger();
        for (int i = 0; i < 2; i++) {
            breakers.add(CircuitBreaker.builder().clock(clock).ticker(clock)
                    .jitter(0).failureThreshold(1).halfOpenPermits(permits)
                    .successThreshold(100).resetTimeout(Duration.ofSeconds(10)).storeErrorPolicy(policy)
                    .onStoreError((op, t) -> storeErrors.incrementAndGet())
                    .store(brokenClaims(backend.newClient(), kind)).build());
        }
        ExecutorService pool = Executors.newFixedThreadPool(CALLERS);
        try {
            LocalModeTest.failOnce(breakers.get(0), OP); // opens
            clock.advance(Duration.ofSeconds(10));
            CountDownLatch decided = new CountDownLatch(CALLERS);
            AtomicInteger[] running = {new AtomicInteger(), new AtomicInteger()};
            AtomicInteger[] maxRunning = {new AtomicInteger(), new AtomicInteger()};
            AtomicInteger ran = new AtomicInteger();
            AtomicInteger unavailable = new AtomicInteger();
            AtomicInteger open = new AtomicInteger();
            Together.run(pool, CALLERS, t -> {
                int which = t % 2;
                CircuitBreaker breaker = breakers.get(which);
                try {
                    breaker.execute(OP, () -> {
                        ran.incrementAndGet();
                        maxRunning[which].accumulateAndGet(running[which].incrementAndGet(), Math::max);
                        decided.countDown();
                        assertTrue(decided.await(30, TimeUnit.SECONDS)); // hold until every caller decided
                        running[which].decrementAndGet();
                        return "trial";
                    });
                } catch (StoreUnavailableException e) {
                    unavailable.incrementAndGet();
                    decided.countDown();
                } catch (CircuitOpenException e) {
                    open.incrementAndGet();
                    decided.countDown();
                }
            });
            if (policy == StoreErrorPolicy.REJECT) {
                assertEquals(0, ran.get(), "REJECT runs no call when the claim fails");
                assertTrue(unavailable.get() >= 1, "the caller whose claim failed gets StoreUnavailableException");
                assertEquals(CALLERS, unavailable.get() + open.get());
            } else {
                for (int i = 0; i < 2; i++) {
                    assertTrue(maxRunning[i].get() <= permits, "breaker " + i + " ran " + maxRunning[i].get()
                            + " trials at once with halfOpenPermits " + permits);
                }
                assertTrue(ran.get() >= 1, "the per-instance claim lets a trial run");
                assertEquals(CALLERS, ran.get() + open.get());
            }
            assertTrue(storeErrors.get() >= 1, "every failed claim is reported as a store error");
        } finally {
            pool.shutdownNow();
            breakers.forEach(CircuitBreaker::close);
            backend.close();
        }
    }
}
