package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreUnavailableException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every {@code Throwable} a store throws but a {@link VirtualMachineError} is the store's failure: a checked
 * exception a driver throws sneakily, a class that fails to load at run time. Under each policy it is
 * handled as a store error (REJECT rejects, ALLOW runs the call, LOCAL counts in memory), and it never
 * replaces the call's own exception.
 */
class StoreThrowableTest extends BreakersOverInMemoryStore {
    private static final String OP = "driver";
    private final List<Throwable> reported = new CopyOnWriteArrayList<>();

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException sneaky(Throwable t) throws E {
        throw (E) t;
    }

    private static Supplier<Throwable> failure(String kind) {
        switch (kind) {
            case "IOException": return () -> new IOException("connection reset (thrown sneakily)");
            case "NoClassDefFoundError": return () -> new NoClassDefFoundError("io/netty/buffer/ByteBuf");
            case "OutOfMemoryError": return () -> new OutOfMemoryError("test: not a store error");
            default: throw new IllegalArgumentException(kind);
        }
    }

    /** A store whose every method throws {@link #failure} while it is set, sneakily if it is checked. */
    static final class ThrowingStore extends ForwardingStore {
        volatile Supplier<Throwable> failure;
        volatile boolean claimsOnly;

        ThrowingStore(Store client) {
            super(client);
        }

        private void check(boolean claim) {
            Supplier<Throwable> f = failure;
            if (f != null && (claim || !claimsOnly)) {
                throw sneaky(f.get());
            }
        }

        @Override
        public Optional<BreakerState> get(String key) {
            check(false);
            return super.get(key);
        }

        @Override
        public void put(String key, BreakerState state, Duration ttl) {
            check(false);
            super.put(key, state, ttl);
        }

        @Override
        public void delete(String key) {
            check(false);
            super.delete(key);
        }

        @Override
        public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
            check(false);
            return super.apply(key, operation, policy, now);
        }

        @Override
        public Optional<String> claimTrial(String key, int permits, Duration ttl) {
            check(true);
            return super.claimTrial(key, permits, ttl);
        }

        @Override
        public void releaseTrial(String key, String token) {
            check(true);
            super.releaseTrial(key, token);
        }

        @Override
        public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
            check(false);
            return super.subscribe(listener, onGap);
        }
    }

    private CircuitBreaker build(Store store, StoreErrorPolicy policy) {
        return CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(2)
                .resetTimeout(Duration.ofSeconds(10)).store(store).storeErrorPolicy(policy)
                .onStoreError((op, t) -> reported.add(t)).build();
    }

    private static boolean causedBy(Throwable t, Class<?> type) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Six failing calls over a store that throws on every method: REJECT runs none, ALLOW runs all six and
     * rethrows each call's own exception, LOCAL runs two (the threshold, counted in memory) and rejects the
     * rest. Every store error is counted and reported with what the store threw.
     */
    @ParameterizedTest
    @CsvSource({"IOException, REJECT", "IOException, ALLOW", "IOException, LOCAL",
            "NoClassDefFoundError, REJECT", "NoClassDefFoundError, ALLOW", "NoClassDefFoundError, LOCAL"})
    void aSneakyCheckedExceptionOrAnErrorFromTheStoreIsAStoreError(String kind, StoreErrorPolicy policy) {
        ThrowingStore store = new ThrowingStore(backend.newClient());
        store.failure = failure(kind);
        Class<?> type = store.failure.get().getClass();
        int ran = 0;
        int rejected = 0;
        try (CircuitBreaker b = build(store, policy)) {
            for (int i = 0; i < 6; i++) {
                IOException own = new IOException("the call's own failure " + i);
                try {
                    b.execute(OP, () -> {
                        throw own;
                    });
                } catch (IOException thrown) {
                    assertSame(own, thrown, "the call's own exception, never the store's");
                    ran++;
                } catch (CircuitOpenException | StoreUnavailableException rejection) {
                    if (rejection instanceof StoreUnavailableException) {
                        assertTrue(causedBy(rejection, type), String.valueOf(rejection.getCause()));
                    }
                    rejected++;
                }
            }
            int expectRan = policy == StoreErrorPolicy.REJECT ? 0 : policy == StoreErrorPolicy.ALLOW ? 6 : 2;
            assertEquals(expectRan, ran, policy + ": calls that ran");
            assertEquals(6 - expectRan, rejected, policy + ": calls rejected");
            // REJECT: each read; ALLOW and LOCAL: each read and each outcome write of the calls that ran
            long expectErrors = policy == StoreErrorPolicy.REJECT ? 6 : 2L * expectRan;
            assertEquals(expectErrors, b.metrics(OP).storeErrors(), "counted: " + b.metrics(OP));
            assertEquals(policy != StoreErrorPolicy.REJECT, b.check(OP) || policy == StoreErrorPolicy.LOCAL);
            if (policy == StoreErrorPolicy.ALLOW) {
                assertEquals("ok", b.execute(OP, () -> "ok"), "a good call returns its value");
            }
        }
        assertTrue(!reported.isEmpty() && reported.stream().allMatch(t -> causedBy(t, type)),
                "reported with what the store threw: " + reported);
    }

    /** A trial claim that throws an Error is a store error too: ALLOW and LOCAL fall back to a per-instance claim. */
    @ParameterizedTest
    @CsvSource({"NoClassDefFoundError, ALLOW", "NoClassDefFoundError, LOCAL", "IOException, ALLOW",
            "NoClassDefFoundError, REJECT"})
    void aClaimThatThrowsAnErrorIsAStoreError(String kind, StoreErrorPolicy policy) {
        ThrowingStore store = new ThrowingStore(backend.newClient());
        try (CircuitBreaker b = build(store, policy)) {
            b.forceHalfOpen(OP);
            store.claimsOnly = true;
            store.failure = failure(kind);
            if (policy == StoreErrorPolicy.REJECT) {
                assertThrows(StoreUnavailableException.class, () -> b.execute(OP, () -> "trial"));
            } else {
                assertEquals("trial", b.execute(OP, () -> "trial"), "a per-instance trial");
                assertEquals(1, b.metrics(OP).trials());
                assertTrue(!backend.get(OP).orElseThrow().open(), "its success closed the breaker");
            }
            assertTrue(b.metrics(OP).storeErrors() >= 1);
        }
    }

    /** A VirtualMachineError is the JVM's, not the store's: it is never absorbed by a policy. */
    @ParameterizedTest
    @CsvSource({"ALLOW", "LOCAL"})
    void aVirtualMachineErrorFromTheStoreIsNotAStoreError(StoreErrorPolicy policy) {
        ThrowingStore store = new ThrowingStore(backend.newClient());
        store.failure = failure("OutOfMemoryError");
        try (CircuitBreaker b = build(store, policy)) {
            assertThrows(OutOfMemoryError.class, () -> b.execute(OP, () -> "never"));
            assertEquals(0, b.metrics(OP).storeErrors());
        }
    }

    @Test
    void theOneDecisionIsEveryThrowableButAVirtualMachineError() {
        assertTrue(StoreErrors.isStoreError(new IOException()));
        assertTrue(StoreErrors.isStoreError(new NoClassDefFoundError()));
        assertTrue(StoreErrors.isStoreError(new AssertionError()));
        assertTrue(!StoreErrors.isStoreError(new OutOfMemoryError()));
        assertTrue(!StoreErrors.isStoreError(new StackOverflowError()));
    }
}
