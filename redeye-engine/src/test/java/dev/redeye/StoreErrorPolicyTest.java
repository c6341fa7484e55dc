package dev.redeye;

import static dev.redeye.LocalModeTest.failOnce;
import static dev.redeye.LocalModeTest.ok;
import static dev.redeye.LocalModeTest.rejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreUnavailableException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** ALLOW, REJECT and LOCAL with a store that throws {@link StoreException} on demand. */
class StoreErrorPolicyTest extends BreakersOverInMemoryStore {
    private static final String OP = "ledger";
    private final SpyStore store = SpyStore.over(backend);
    private final List<String> errors = new CopyOnWriteArrayList<>();

    private CircuitBreaker build(StoreErrorPolicy policy) {
        CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(3)
                .resetTimeout(Duration.ofSeconds(10)).store(store).storeErrorPolicy(policy)
                .onStoreError((op, t) -> errors.add(op + ":" + t.getMessage())).build();
        breakers.add(b);
        return b;
    }

    @Test
    void allowRunsTheCallAndReportsTheError() {
        CircuitBreaker b = build(StoreErrorPolicy.ALLOW);
        store.failing = true;
        assertEquals("ok", ok(b, OP));
        failOnce(b, OP); // the failed write after the call is swallowed; the call's own exception is rethrown
        assertEquals(new Metrics(2, 1, 1, 0, 0, 3, 0), b.metrics(OP));
        assertEquals(3, errors.size(), "read, read, write");
        assertTrue(errors.get(0).startsWith(OP + ":backend down"));
        assertTrue(b.check(OP));
    }

    @Test
    void allowNeverLetsACallThroughAKnownOpenStateWhoseReVerificationFails() {
        CircuitBreaker b = build(StoreErrorPolicy.ALLOW);
        for (int i = 0; i < 3; i++) {
            failOnce(b, OP);
        }
        clock.advance(Duration.ofSeconds(3)); // past openCacheRefresh (2 s), before eligibility (10 s)
        store.failing = true;
        assertThrows(CircuitOpenException.class, () -> ok(b, OP),
                "a failed re-read of a known open state must not allow the call before eligibility");
        assertEquals(1, errors.size());
        clock.advance(Duration.ofSeconds(8)); // past eligibility: ALLOW lets the call through on a store error
        assertEquals("ok", ok(b, OP));
    }

    @Test
    void rejectDoesNotRunTheCall() {
        CircuitBreaker b = build(StoreErrorPolicy.REJECT);
        store.failing = true;
        AtomicInteger ran = new AtomicInteger();
        StoreUnavailableException e = assertThrows(StoreUnavailableException.class,
                () -> b.execute(OP, ran::incrementAndGet));
        assertEquals(0, ran.get());
        assertEquals(OP, e.operation());
        assertTrue(e.getCause() instanceof StoreException);
        assertEquals("fallback", b.execute(OP, () -> "live", r -> "fallback"));
        assertEquals(new Metrics(0, 0, 0, 0, 2, 2, 0), b.metrics(OP));
        assertFalse(b.check(OP));
        store.failing = false;
        assertEquals("ok", ok(b, OP));
    }

    @Test
    void localDegradesToMemorySeededWithTheLastStateSeenAndRetriesTheRealStoreEveryCall() {
        CircuitBreaker b = build(StoreErrorPolicy.LOCAL);
        failOnce(b, OP);
        failOnce(b, OP); // the real store holds failures = 2 and this instance saw it
        store.failing = true;
        failOnce(b, OP); // 2 + 1 = threshold, counted in memory: opens locally
        rejected(b, OP);
        assertEquals(2, backend.get(OP).orElseThrow().failures(), "nothing written to the real store");
        assertFalse(backend.get(OP).orElseThrow().open());
        int readsWhileDown = store.reads.get();
        clock.advance(Duration.ofSeconds(2));
        rejected(b, OP);
        assertTrue(store.reads.get() > readsWhileDown, "the real store gets a fresh chance");
        store.failing = false;
        clock.advance(Duration.ofSeconds(2));
        rejected(b, OP); // a good read alone does not end an outage in which writes failed (see DegradingStore)
        clock.advance(Duration.ofSeconds(6)); // the in-memory open period's eligibility: the claim is a real write
        assertEquals("ok", ok(b, OP), "the real store is the truth again, nothing replayed");
        BreakerState real = backend.get(OP).orElseThrow();
        assertFalse(real.open());
        assertEquals(0, real.failures(), "the success cleared the real store's own failures");
        assertTrue(b.metrics(OP).storeErrors() >= 3);
        assertEquals(b.metrics(OP).storeErrors(), errors.size());
    }

    /** A sliding window is seeded into memory too: the outage counts on from the window the store held. */
    @Test
    void localSeedsMemoryWithTheLastWindowSeen() {
        CircuitBreaker b = keep(CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).store(store)
                .closeStore(false).storeErrorPolicy(StoreErrorPolicy.LOCAL)
                .slidingWindow(dev.redeye.api.SlidingWindowType.COUNT_BASED, 4).minimumNumberOfCalls(4));
        assertEquals("ok", ok(b, OP));
        failOnce(b, OP);
        failOnce(b, OP); // the real store's window: 1 success, 2 failures; this instance saw it
        store.failing = true;
        assertEquals("ok", ok(b, OP)); // 4 calls, 2 failed: 50 %, which opens (counted in memory)
        rejected(b, OP);
        assertEquals(3, backend.get(OP).orElseThrow().window().calls(), "nothing written to the real store");
    }

    @Test
    void localWithoutAnyStateSeenStartsFromClosed() {
        CircuitBreaker b = build(StoreErrorPolicy.LOCAL);
        store.failing = true;
        assertEquals("ok", ok(b, OP));
        failOnce(b, OP);
        failOnce(b, OP);
        failOnce(b, OP);
        rejected(b, OP);
        assertEquals(BreakerStatus.OPEN, b.status(OP), "status reads the degraded state too");
        b.reset(OP);
        assertEquals("ok", ok(b, OP));
        assertTrue(backend.get(OP).isEmpty());
    }

    @Test
    void failedWritesNeverOverrideTheCallsResultOrException() {
        for (StoreErrorPolicy policy : StoreErrorPolicy.values()) {
            SpyStore writesFail = SpyStore.over(backend);
            writesFail.failWrites = true;
            CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock)
                    .store(writesFail).storeErrorPolicy(policy)
                    .strategy(dev.redeye.api.Strategy.ERROR_RATE).build();
            breakers.add(b);
            assertEquals("result", b.execute(OP, () -> "result"));
            IOException boom = new IOException("call failed");
            assertSame(boom, assertThrows(IOException.class, () -> b.execute(OP, () -> {
                throw boom;
            })));
            assertEquals(2, b.metrics(OP).storeErrors(), policy.name());
        }
    }

    @Test
    void storeErrorsAreLoggedRateLimited() {
        try (LogCapture log = LogCapture.start()) {
            CircuitBreaker b = build(StoreErrorPolicy.ALLOW);
            store.failing = true;
            for (int i = 0; i < 20; i++) {
                ok(b, OP);
            }
            assertEquals(1, log.warnings("store error for operation 'ledger'"));
            clock.advance(Duration.ofSeconds(10));
            ok(b, OP);
            assertEquals(2, log.warnings("store error for operation 'ledger'"));
            assertEquals(21, b.metrics(OP).storeErrors());
        }
    }
}
