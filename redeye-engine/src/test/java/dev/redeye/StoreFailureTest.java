package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreUnavailableException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Point 7: any exception a store throws, not only StoreException, is a store error under the policy and never
 * reaches the caller as if the call had failed; writes after a call are best-effort; in local mode a close()
 * racing calls never throws a store error at them.
 */
class StoreFailureTest extends BreakersOverInMemoryStore {
    private static final String OP = "driver";
    private final List<Throwable> reported = new CopyOnWriteArrayList<>();

    private static Supplier<RuntimeException> failure(String kind) {
        switch (kind) {
            case "IllegalStateException": return () -> new IllegalStateException("Pool not open");
            case "NullPointerException": return () -> new NullPointerException();
            case "UnsupportedOperationException": return () -> new UnsupportedOperationException("driver");
            default: return null; // "null": get answers null
        }
    }

    /** A store whose reads, or writes, fail with a driver's own exception while {@code broken} says so. */
    private static final class DriverStore extends ForwardingStore {
        private final Supplier<RuntimeException> failure;
        volatile boolean readsBroken;
        volatile boolean writesBroken;

        DriverStore(Store client, Supplier<RuntimeException> failure) {
            super(client);
            this.failure = failure;
        }

        @Override
        public Optional<BreakerState> get(String key) {
            if (readsBroken) {
                if (failure == null) {
                    return null;
                }
                throw failure.get();
            }
            return super.get(key);
        }

        @Override
        public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
            if (writesBroken) {
                if (failure == null) {
                    return null;
                }
                throw failure.get();
            }
            return super.apply(key, operation, policy, now);
        }
    }

    private CircuitBreaker build(DriverStore store, StoreErrorPolicy policy) {
        return CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(2).store(store)
                .storeErrorPolicy(policy).onStoreError((op, t) -> reported.add(t)).build();
    }

    @ParameterizedTest
    @ValueSource(strings = {"IllegalStateException", "NullPointerException", "UnsupportedOperationException",
            "null"})
    void aDriversOwnExceptionAtTheGateIsAStoreErrorUnderEveryPolicy(String kind) {
        DriverStore store = new DriverStore(backend.newClient(), failure(kind));
        store.readsBroken = true;
        try (CircuitBreaker allow = build(store, StoreErrorPolicy.ALLOW)) {
            assertEquals("ran", allow.execute(OP, () -> "ran"), "ALLOW runs the call");
            assertEquals(1, allow.metrics(OP).storeErrors());
        }
        try (CircuitBreaker reject = build(store, StoreErrorPolicy.REJECT)) {
            StoreUnavailableException e = assertThrows(StoreUnavailableException.class,
                    () -> reject.execute(OP, () -> "never"));
            assertTrue(e.getCause() instanceof StoreException, "the cause is a StoreException: " + e.getCause());
            assertTrue(!reject.check(OP));
        }
        try (CircuitBreaker local = build(store, StoreErrorPolicy.LOCAL)) {
            assertEquals("ran", local.execute(OP, () -> "ran"), "LOCAL answers from memory");
            assertThrows(IOException.class, () -> local.execute(OP, () -> {
                throw new IOException("down");
            }));
            assertThrows(IOException.class, () -> local.execute(OP, () -> {
                throw new IOException("down");
            }));
            assertEquals(BreakerStatus.OPEN, assertThrows(dev.redeye.api.CircuitOpenException.class,
                    () -> local.execute(OP, () -> "x")).status(), "counted in memory");
        }
        assertTrue(reported.size() >= 4, "every error reported: " + reported);
    }

    @ParameterizedTest
    @ValueSource(strings = {"IllegalStateException", "NullPointerException", "null"})
    void aDriversOwnExceptionAtTheWriteNeverOverridesTheCallsOutcome(String kind) {
        DriverStore store = new DriverStore(backend.newClient(), failure(kind));
        store.writesBroken = true;
        try (CircuitBreaker b = build(store, StoreErrorPolicy.ALLOW)) {
            IOException boom = new IOException("call failed");
            assertSame(boom, assertThrows(IOException.class, () -> b.execute(OP, () -> {
                throw boom;
            })));
            assertEquals(1, b.metrics(OP).storeErrors());
            assertTrue(reported.get(0) instanceof StoreException, String.valueOf(reported.get(0)));
        }
    }

    @Test
    void inLocalModeACloseDuringACallNeverThrowsAtThatCall() throws Exception {
        CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofSeconds(1)).build();
        assertThrows(IOException.class, () -> b.execute(OP, () -> {
            throw new IOException("opens");
        }));
        clock.advance(Duration.ofSeconds(1));
        assertEquals("trial ran", b.execute(OP, () -> {
            b.close();
            return "trial ran";
        }), "a trial in flight when the breaker closes");
        CircuitBreaker c = CircuitBreaker.builder().clock(clock).ticker(clock).build();
        IOException boom = new IOException("failed after close");
        assertSame(boom, assertThrows(IOException.class, () -> c.execute(OP, () -> {
            c.close();
            throw boom;
        })));
        assertThrows(IllegalStateException.class, () -> c.execute(OP, () -> "after close"));
    }

    @Test
    void inLocalModeCallsRacingACloseSeeOnlyTheClosedBreaker() throws Exception {
        for (int round = 0; round < 50; round++) {
            CircuitBreaker b = CircuitBreaker.builder().failureThreshold(1_000_000).build();
            List<Throwable> unexpected = new CopyOnWriteArrayList<>();
            CountDownLatch started = new CountDownLatch(4);
            Thread[] threads = new Thread[4];
            for (int t = 0; t < threads.length; t++) {
                boolean failing = t == 0; // one thread's calls fail, so the close also races outcome writes
                threads[t] = new Thread(() -> {
                    started.countDown();
                    while (true) {
                        try {
                            b.execute(OP, () -> {
                                if (failing) {
                                    throw new IOException("failure");
                                }
                                return "ok";
                            });
                        } catch (IOException own) {
                            // the call's own failure, rethrown unchanged
                        } catch (IllegalStateException closed) {
                            return; // the breaker is closed: the only exception a caller may see
                        } catch (Throwable other) {
                            unexpected.add(other);
                            return;
                        }
                    }
                });
            }
            for (Thread t : threads) {
                t.start();
            }
            assertTrue(started.await(10, TimeUnit.SECONDS));
            Thread.sleep(1);
            b.close();
            for (Thread t : threads) {
                t.join(10_000);
            }
            assertEquals(List.of(), unexpected, "round " + round);
        }
    }
}
