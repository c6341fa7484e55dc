package dev.redeye;

import static dev.redeye.LocalModeTest.failOnce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.StoreUnavailableException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code executeOrElse} and {@code executeOrElseGet}: a rejected call returns the fallback value without an
 * exception being built (the allocation side is in {@link AllocationTest}); everything else is
 * {@code execute}'s behaviour.
 */
class OrElseTest {
    private static final String OP = "pricing";
    private final MutableClock clock = new MutableClock();
    private final List<CircuitBreaker> open = new ArrayList<>();

    private CircuitBreaker build(CircuitBreakerBuilder b) {
        CircuitBreaker cb = b.clock(clock).ticker(clock).jitter(0).resetTimeout(Duration.ofSeconds(10)).build();
        open.add(cb);
        return cb;
    }

    @AfterEach
    void closeAll() {
        open.forEach(CircuitBreaker::close);
    }

    @Test
    void aClosedBreakerRunsTheCallAndAnOpenOneAnswersWithTheValue() {
        CircuitBreaker b = build(CircuitBreaker.builder().failureThreshold(1));
        AtomicInteger ran = new AtomicInteger();
        assertEquals("live", b.executeOrElse(OP, () -> {
            ran.incrementAndGet();
            return "live";
        }, "fallback"));
        failOnce(b, OP);
        assertEquals("fallback", b.executeOrElse(OP, () -> {
            ran.incrementAndGet();
            return "live";
        }, "fallback"));
        assertNull(b.executeOrElse(OP, () -> "live", null), "null is a valid fallback value");
        assertEquals(1, ran.get(), "a rejected call never runs");
        assertEquals(new Metrics(2, 1, 1, 0, 2, 0, 0), b.metrics(OP));
    }

    @Test
    void theCallsOwnFailureIsRethrownNeverReplacedByTheValue() {
        CircuitBreaker b = build(CircuitBreaker.builder().failureThreshold(2));
        IOException boom = new IOException("boom");
        IOException thrown = assertThrows(IOException.class, () -> b.executeOrElse(OP, () -> {
            throw boom;
        }, "fallback"));
        assertSame(boom, thrown);
        assertEquals(1, b.metrics(OP).failures());
        assertEquals(1, b.state(OP).failures());
    }

    @Test
    void theSupplierRunsOnlyForARejectionAndWhatItThrowsReachesTheCaller() {
        CircuitBreaker b = build(CircuitBreaker.builder().failureThreshold(1));
        AtomicInteger asked = new AtomicInteger();
        assertEquals("live", b.executeOrElseGet(OP, () -> "live", () -> "fallback#" + asked.incrementAndGet()));
        assertEquals(0, asked.get());
        failOnce(b, OP);
        assertEquals("fallback#1", b.executeOrElseGet(OP, () -> "live", () -> "fallback#" + asked.incrementAndGet()));
        IllegalStateException mine = new IllegalStateException("no cached price");
        assertSame(mine, assertThrows(IllegalStateException.class, () -> b.executeOrElseGet(OP, () -> "live", () -> {
            throw mine;
        })));
    }

    @Test
    void theValueTakesPrecedenceOverTheBreakerWideFallback() {
        List<RuntimeException> fallbackSaw = new ArrayList<>();
        CircuitBreaker b = build(CircuitBreaker.builder().failureThreshold(1).fallback((op, rejection) -> {
            fallbackSaw.add(rejection);
            return "breaker-wide";
        }));
        failOnce(b, OP);
        assertEquals("per-call", b.executeOrElse(OP, () -> "live", "per-call"));
        assertEquals("per-call", b.executeOrElseGet(OP, () -> "live", () -> "per-call"));
        assertTrue(fallbackSaw.isEmpty());
        assertEquals("breaker-wide", b.execute(OP, () -> "live"), "execute still uses the breaker-wide fallback");
        assertTrue(fallbackSaw.get(0) instanceof CircuitOpenException);
    }

    /** Listeners and observers are told of every rejection: for them the exception is built. */
    @Test
    void listenersAndObserversStillSeeTheRejection() {
        List<RuntimeException> listener = new CopyOnWriteArrayList<>();
        List<RuntimeException> observer = new CopyOnWriteArrayList<>();
        CircuitBreaker b = build(CircuitBreaker.builder().failureThreshold(1)
                .onCallRejected((op, rejection) -> listener.add(rejection)));
        failOnce(b, OP);
        assertEquals("fallback", b.executeOrElse(OP, () -> "live", "fallback"));
        b.addObserver(new CircuitBreakerObserver() {
            @Override
            public void callRejected(ObservedOperation operation, RuntimeException rejection) {
                observer.add(rejection);
            }
        });
        clock.advance(Duration.ofSeconds(4));
        assertEquals("fallback", b.executeOrElseGet(OP, () -> "live", () -> "fallback"));
        assertEquals(2, listener.size());
        assertEquals(1, observer.size());
        CircuitOpenException seen = (CircuitOpenException) observer.get(0);
        assertSame(seen, listener.get(1));
        assertEquals(OP, seen.operation());
        assertEquals(BreakerStatus.OPEN, seen.status());
        assertEquals(Duration.ofSeconds(6), seen.retryAfter().orElseThrow());
        assertEquals(6_000, seen.retryAfterMillis());
    }

    /** Half-open with the one permit taken, and forced open: the other rejections answer with the value too. */
    @Test
    void everyKindOfRejectionAnswersWithTheValue() {
        CircuitBreaker b = build(CircuitBreaker.builder().failureThreshold(1));
        failOnce(b, OP);
        clock.advance(Duration.ofSeconds(10));
        String trial = b.execute(OP, () -> b.executeOrElse(OP, () -> "second", "busy"));
        assertEquals("busy", trial, "the inner call was rejected while the trial ran");
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
        b.forceOpen(OP);
        assertEquals("forced", b.executeOrElse(OP, () -> "live", "forced"));
        assertEquals(2, b.metrics(OP).rejections());
    }

    /** A store error under REJECT is a rejection as well (its exception, carrying the cause, is built). */
    @Test
    void aStoreErrorUnderRejectAnswersWithTheValue() {
        InMemoryStore backend = new InMemoryStore();
        SpyStore store = SpyStore.over(backend);
        List<RuntimeException> rejected = new CopyOnWriteArrayList<>();
        CircuitBreaker b = build(CircuitBreaker.builder().store(store).storeErrorPolicy(StoreErrorPolicy.REJECT)
                .onCallRejected((op, rejection) -> rejected.add(rejection)));
        try {
            store.failing = true;
            AtomicInteger ran = new AtomicInteger();
            assertEquals("fallback", b.executeOrElse(OP, () -> "live#" + ran.incrementAndGet(), "fallback"));
            assertEquals(0, ran.get());
            assertTrue(rejected.get(0) instanceof StoreUnavailableException);
            store.failing = false;
            assertEquals("live#1", b.executeOrElse(OP, () -> "live#" + ran.incrementAndGet(), "fallback"));
        } finally {
            backend.close();
        }
    }

    @Test
    void badArgumentsFailClearly() {
        CircuitBreaker b = build(CircuitBreaker.builder());
        assertEquals("call", assertThrows(NullPointerException.class,
                () -> b.executeOrElse(OP, null, "x")).getMessage());
        assertEquals("orElse", assertThrows(NullPointerException.class,
                () -> b.executeOrElseGet(OP, () -> "x", null)).getMessage());
        assertThrows(NullPointerException.class, () -> b.executeOrElse(null, () -> "x", "y"));
        assertThrows(IllegalArgumentException.class, () -> b.executeOrElse("", () -> "x", "y"));
        b.close();
        assertThrows(IllegalStateException.class, () -> b.executeOrElse(OP, () -> "x", "y"));
    }
}
