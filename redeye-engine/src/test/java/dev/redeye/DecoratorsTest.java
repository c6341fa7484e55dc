package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.CircuitOpenException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Decorators bind an operation once; {@code execute} overloads take plain lambdas and method references
 * without casts (this class compiling is half of the test).
 */
class DecoratorsTest {
    private static final String OP = "catalog";

    private final AtomicInteger ran = new AtomicInteger();

    private void sideEffect() {
        ran.incrementAndGet();
    }

    private String value() {
        ran.incrementAndGet();
        return "v";
    }

    private static String io() throws IOException {
        throw new IOException("io");
    }

    private static CircuitBreaker oneFailureOpens() {
        return CircuitBreaker.builder().failureThreshold(1).resetTimeout(Duration.ofMinutes(1)).build();
    }

    @Test
    void plainLambdasAndMethodReferencesPickTheRightOverload() throws Exception {
        try (CircuitBreaker b = CircuitBreaker.ofDefaults()) {
            String s = b.execute(OP, () -> "x");                   // a value: the supplier overload
            assertEquals("x", s);
            b.execute(OP, () -> {                                     // a block without return: Runnable
                ran.incrementAndGet();
            });
            List<Integer> list = new ArrayList<>();
            boolean added = b.execute(OP, () -> list.add(1));       // an expression with a value: the supplier
            assertTrue(added);
            b.execute(OP, this::sideEffect);                          // a void method: Runnable
            String v = b.execute(OP, this::value);                    // a method with a value: the supplier
            assertEquals("v", v);
            Runnable r = this::sideEffect;
            b.execute(OP, r);
            IOException e = assertThrows(IOException.class, () -> b.execute(OP, DecoratorsTest::io));
            assertEquals("io", e.getMessage(), "a checked exception is inferred and rethrown unchanged");
            assertEquals(4, ran.get());
            assertEquals(7, b.metrics(OP).calls());
        }
    }

    @Test
    void decorateSupplierBindsTheOperationOnce() {
        try (CircuitBreaker b = oneFailureOpens()) {
            Supplier<String> ok = b.decorateSupplier(OP, () -> "ok");
            Supplier<String> bad = b.decorateSupplier(OP, () -> {
                throw new IllegalStateException("down");
            });
            assertEquals("ok", ok.get());
            assertThrows(IllegalStateException.class, bad::get);
            CircuitOpenException e = assertThrows(CircuitOpenException.class, ok::get);
            assertEquals(OP, e.operation());
            assertEquals(3, b.metrics(OP).calls() + b.metrics(OP).rejections());
        }
    }

    @Test
    void decorateCallableRethrowsCheckedExceptions() throws Exception {
        try (CircuitBreaker b = oneFailureOpens()) {
            Callable<String> ok = b.decorateCallable(OP, () -> "ok");
            Callable<String> bad = b.decorateCallable(OP, DecoratorsTest::io);
            assertEquals("ok", ok.call());
            assertThrows(IOException.class, bad::call);
            assertThrows(CircuitOpenException.class, ok::call);
        }
    }

    @Test
    void decorateRunnableAndExecuteRunnable() {
        try (CircuitBreaker b = oneFailureOpens()) {
            Runnable guarded = b.decorateRunnable(OP, this::sideEffect);
            guarded.run();
            b.execute(OP, (Runnable) () -> {
                throw new IllegalStateException("down");
            });
        } catch (IllegalStateException expected) {
            assertEquals(1, ran.get());
        }
        try (CircuitBreaker b = oneFailureOpens()) {
            Runnable failing = b.decorateRunnable(OP, () -> {
                throw new IllegalStateException("down");
            });
            assertThrows(IllegalStateException.class, failing::run);
            assertThrows(CircuitOpenException.class, b.decorateRunnable(OP, this::sideEffect)::run);
        }
    }

    @Test
    void decorateCompletionStageRejectsThroughTheStage() throws Exception {
        try (CircuitBreaker b = oneFailureOpens()) {
            Supplier<CompletionStage<String>> ok = b.decorateCompletionStage(OP,
                    () -> CompletableFuture.completedFuture("ok"));
            Supplier<CompletionStage<String>> bad = b.decorateCompletionStage(OP,
                    () -> CompletableFuture.failedFuture(new IOException("down")));
            assertEquals("ok", ok.get().toCompletableFuture().get(5, TimeUnit.SECONDS));
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> bad.get().toCompletableFuture().get(5, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof IOException);
            e = assertThrows(ExecutionException.class, () -> ok.get().toCompletableFuture().get(5, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof CircuitOpenException, String.valueOf(e.getCause()));
        }
    }

    @Test
    void decoratorsRefuseBadArgumentsAtOnce() {
        try (CircuitBreaker b = CircuitBreaker.ofDefaults()) {
            assertThrows(IllegalArgumentException.class, () -> b.decorateSupplier("", () -> "x"));
            assertThrows(NullPointerException.class, () -> b.decorateSupplier(null, () -> "x"));
            assertThrows(NullPointerException.class, () -> b.decorateCallable(OP, null));
            assertThrows(NullPointerException.class, () -> b.decorateRunnable(OP, null));
            assertThrows(NullPointerException.class, () -> b.decorateCompletionStage(OP, null));
            Supplier<String> s = b.decorateSupplier(OP, () -> "x");
            assertSame(s.get(), s.get());
        }
    }
}
