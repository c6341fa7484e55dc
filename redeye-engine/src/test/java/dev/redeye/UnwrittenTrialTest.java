package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A trial that failed but whose failure could not be written (a store error on the trial outcome) backs off
 * locally as if the reopen had been written: the next trial on this instance comes one (backed-off) reset
 * window later by its ticker, not at once, whatever the store error policy, whether the store's reads still
 * work or not.
 */
class UnwrittenTrialTest extends BreakersOverInMemoryStore {
    private static final String OP = "unwritten";

    private static void failingTrial(CircuitBreaker b) {
        assertThrows(IOException.class, () -> b.execute(OP, () -> {
            throw new IOException("still down");
        }));
    }

    /**
     * @param readsWork whether only writes fail (a replica refusing writes) or the whole store is down
     */
    @ParameterizedTest
    @CsvSource({"ALLOW, true", "ALLOW, false", "LOCAL, true", "LOCAL, false", "REJECT, true"})
    void aTrialFailureThatCouldNotBeWrittenBacksOffAsIfItHadBeen(StoreErrorPolicy policy, boolean readsWork) {
        SpyStore store = SpyStore.over(backend);
        try (CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofSeconds(10)).backoffMultiplier(2).store(store).storeErrorPolicy(policy)
                .build()) {
            LocalModeTest.failOnce(b, OP); // opens, written: window 10 s
            clock.advance(Duration.ofSeconds(10));
            if (readsWork) {
                store.failWrites = true; // a replica: reads answer, writes are refused (claims too, but
                store.failClaims = policy != StoreErrorPolicy.REJECT; // REJECT would not run the trial then)
            } else {
                store.failing = true;
            }
            failingTrial(b); // the trial runs and fails; its reopen cannot be written
            assertEquals(1, b.metrics(OP).trials());
            assertTrue(backend.get(OP).orElseThrow().openCount() == 0, "nothing was written");

            CircuitOpenException next = assertThrows(CircuitOpenException.class, () -> b.execute(OP, () -> "ran"));
            assertEquals(BreakerStatus.OPEN, next.status(), "backing off, not half-open");
            assertEquals(20_000, next.retryAfter().orElseThrow().toMillis(), "the window of the reopen: 10 s x 2");
            clock.advance(Duration.ofMillis(19_999));
            assertThrows(CircuitOpenException.class, () -> b.execute(OP, () -> "ran"));
            assertEquals(1, b.metrics(OP).trials(), "no trial during the backoff");
            clock.advance(Duration.ofMillis(1));
            assertEquals("trial", b.execute(OP, () -> "trial"), "the next trial, one backed-off window later");
            assertEquals(2, b.metrics(OP).trials());
        }
    }
}
