package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.OperationNames;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Names belong to the engine: every public entry that takes an operation name refuses an invalid one with
 * {@link IllegalArgumentException} to the caller, before any store call, under every store error policy; the
 * longest valid names work end to end.
 */
class OperationNameTest {
    private final List<CircuitBreaker> open = new ArrayList<>();

    @AfterEach
    void close() {
        open.forEach(CircuitBreaker::close);
    }

    /** Invalid names, by what they break. */
    static Map<String, String> invalidNames() {
        Map<String, String> out = new LinkedHashMap<>();
        out.put("empty", "");
        out.put("lone high surrogate", "pay\uD800ment");
        out.put("lone high surrogate at the end", "payment\uD83D");
        out.put("lone low surrogate", "\uDE00payment");
        out.put("U+0000", "pay\u0000ment");
        out.put("one over the length bound", "x".repeat(OperationNames.MAX_LENGTH + 1));
        return out;
    }

    /** Every public entry that takes an operation name, as a call on a breaker. */
    static Map<String, Consumer<CircuitBreaker>> entries(String name) {
        Map<String, Consumer<CircuitBreaker>> out = new LinkedHashMap<>();
        out.put("execute(supplier)", b -> b.execute(name, () -> "ran"));
        out.put("execute(supplier, fallback)", b -> b.execute(name, () -> "ran", ex -> "fallback"));
        out.put("execute(runnable)", b -> b.execute(name, (Runnable) () -> { }));
        out.put("executeOrElse", b -> b.executeOrElse(name, () -> "ran", "else"));
        out.put("executeOrElseGet", b -> b.executeOrElseGet(name, () -> "ran", () -> "else"));
        out.put("executeAsync", b -> b.executeAsync(name, () -> CompletableFuture.completedFuture("ran")));
        out.put("tryAcquire", b -> b.tryAcquire(name));
        out.put("decorateSupplier", b -> b.decorateSupplier(name, () -> "ran"));
        out.put("decorateCallable", b -> b.decorateCallable(name, () -> "ran"));
        out.put("decorateRunnable", b -> b.decorateRunnable(name, () -> { }));
        out.put("decorateCompletionStage", b -> b.decorateCompletionStage(name,
                () -> CompletableFuture.completedFuture("ran")));
        out.put("state", b -> b.state(name));
        out.put("status", b -> b.status(name));
        out.put("check", b -> b.check(name));
        out.put("forceOpen", b -> b.forceOpen(name));
        out.put("forceHalfOpen", b -> b.forceHalfOpen(name));
        out.put("reset", b -> b.reset(name));
        out.put("recordSuccess", b -> b.recordSuccess(name));
        out.put("recordFailure", b -> b.recordFailure(name));
        return out;
    }

    private CircuitBreaker distributed(SpyStore spy, StoreErrorPolicy policy) {
        CircuitBreaker b = CircuitBreaker.builder().store(spy).storeErrorPolicy(policy).failureThreshold(2).build();
        open.add(b);
        return b;
    }

    @Test
    void everyEntryRefusesAnInvalidNameBeforeAnyStoreCallUnderEveryPolicy() {
        List<String> wrong = new ArrayList<>();
        for (StoreErrorPolicy policy : StoreErrorPolicy.values()) {
            InMemoryStore backend = new InMemoryStore();
            SpyStore spy = SpyStore.over(backend);
            AtomicInteger storeErrors = new AtomicInteger();
            CircuitBreaker b = CircuitBreaker.builder().store(spy).storeErrorPolicy(policy).failureThreshold(2)
                    .onStoreError((op, ex) -> storeErrors.incrementAndGet()).build();
            open.add(b);
            for (Map.Entry<String, String> bad : invalidNames().entrySet()) {
                for (Map.Entry<String, Consumer<CircuitBreaker>> entry : entries(bad.getValue()).entrySet()) {
                    spy.resetCounts();
                    String what = policy + " " + entry.getKey() + " with " + bad.getKey();
                    try {
                        entry.getValue().accept(b);
                        wrong.add(what + ": no exception");
                    } catch (IllegalArgumentException expected) {
                        // the caller is told
                    } catch (RuntimeException other) {
                        wrong.add(what + ": " + other);
                    }
                    int ops = spy.reads.get() + spy.writes.get() + spy.claims.get() + spy.releases.get();
                    if (ops != 0) {
                        wrong.add(what + ": " + ops + " store operation(s)");
                    }
                }
            }
            if (storeErrors.get() != 0) {
                wrong.add(policy + ": " + storeErrors.get() + " store error(s) reported for the caller's error");
            }
            if (!b.allMetrics().isEmpty()) {
                wrong.add(policy + ": invalid names entered the registry: " + b.allMetrics().size());
            }
            backend.close();
        }
        assertTrue(wrong.isEmpty(), wrong.size() + " entries let an invalid name through:\n  "
                + String.join("\n  ", wrong));
    }

    @Test
    void localModeRefusesInvalidNamesToo() {
        CircuitBreaker b = CircuitBreaker.ofDefaults();
        open.add(b);
        for (Map.Entry<String, String> bad : invalidNames().entrySet()) {
            for (Map.Entry<String, Consumer<CircuitBreaker>> entry : entries(bad.getValue()).entrySet()) {
                assertThrows(IllegalArgumentException.class, () -> entry.getValue().accept(b),
                        entry.getKey() + " with " + bad.getKey());
            }
        }
        assertThrows(NullPointerException.class, () -> b.execute(null, () -> "x"));
        assertThrows(NullPointerException.class, () -> b.decorateSupplier(null, () -> "x"));
    }

    @Test
    void theMessageSaysWhatIsWrongAndWhere() {
        CircuitBreaker b = CircuitBreaker.ofDefaults();
        open.add(b);
        IllegalArgumentException surrogate = assertThrows(IllegalArgumentException.class,
                () -> b.execute("ab\uD800c", () -> "x"));
        assertTrue(surrogate.getMessage().contains("unpaired high surrogate U+D800 at index 2"), surrogate.getMessage());
        IllegalArgumentException nul = assertThrows(IllegalArgumentException.class,
                () -> b.execute("ab\u0000", () -> "x"));
        assertTrue(nul.getMessage().contains("U+0000 at index 2"), nul.getMessage());
        IllegalArgumentException longName = assertThrows(IllegalArgumentException.class,
                () -> b.execute("y".repeat(5000), () -> "x"));
        assertTrue(longName.getMessage().contains("5000 characters long; at most " + OperationNames.MAX_LENGTH),
                longName.getMessage());
        assertTrue(longName.getMessage().length() < 300, "the name is abbreviated: " + longName.getMessage());
    }

    @Test
    void theLongestValidNamesWorkEndToEnd() {
        InMemoryStore backend = new InMemoryStore();
        SpyStore spy = SpyStore.over(backend);
        CircuitBreaker b = distributed(spy, StoreErrorPolicy.REJECT);
        // the most UTF-8 a valid name can take: 3 bytes per code unit; and the most code points: pairs
        String cjk = "\u4e2d".repeat(OperationNames.MAX_LENGTH);
        String emoji = "\uD83D\uDE00".repeat(OperationNames.MAX_LENGTH / 2);
        for (String name : List.of(cjk, emoji, "x".repeat(OperationNames.MAX_LENGTH))) {
            assertEquals("ran", b.execute(name, () -> "ran"));
            b.recordFailure(name);
            b.recordFailure(name);
            assertEquals(BreakerStatus.OPEN, b.status(name));
            b.reset(name);
            assertEquals(BreakerStatus.CLOSED, b.status(name));
        }
        backend.close();
    }

    @Test
    void aDecoratorChecksItsNameOnceWhenItIsMade() {
        CircuitBreaker b = CircuitBreaker.ofDefaults();
        open.add(b);
        assertThrows(IllegalArgumentException.class, () -> b.decorateRunnable("a\uDC00", () -> { }));
        assertEquals("ran", b.decorateSupplier("fine", () -> "ran").get());
    }
}
