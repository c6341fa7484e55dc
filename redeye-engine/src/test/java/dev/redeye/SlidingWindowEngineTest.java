package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.InvalidOptionException;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SlidingWindowEngineTest extends BreakersOverInMemoryStore {
    private static final String OP = "inventory";

    private CircuitBreakerBuilder windowed(SlidingWindowType type, int size) {
        return CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).slidingWindow(type, size)
                .failureRateThreshold(50).minimumNumberOfCalls(20);
    }

    private static void fail(CircuitBreaker cb) {
        assertThrows(IOException.class, () -> cb.execute(OP, () -> {
            throw new IOException("down");
        }));
    }

    private static void succeed(CircuitBreaker cb) throws Exception {
        cb.execute(OP, () -> "ok");
    }

    @Test
    void twoInstancesShareATimeWindowThatOpensAtTheCallCrossingIt() throws Exception {
        CircuitBreaker a = keep(windowed(SlidingWindowType.TIME_BASED, 10).store(backend).closeStore(false));
        CircuitBreaker b = keep(windowed(SlidingWindowType.TIME_BASED, 10).store(backend).closeStore(false));
        // 12 outcomes, 9 successes 3 failures, then 12 s pass: they leave the window
        for (int i = 0; i < 9; i++) {
            succeed(i % 2 == 0 ? a : b);
        }
        for (int i = 0; i < 3; i++) {
            fail(b);
        }
        clock.advance(Duration.ofSeconds(12));
        // 19 calls, 9 failed: below the minimum of 20
        for (int i = 0; i < 10; i++) {
            succeed(i % 2 == 0 ? a : b);
        }
        for (int i = 0; i < 9; i++) {
            fail(i % 2 == 0 ? a : b);
            clock.advanceMillis(100);
        }
        assertEquals(BreakerStatus.CLOSED, a.status(OP));
        fail(b); // 20 calls, 10 failed: 50 %
        assertEquals(BreakerStatus.OPEN, a.status(OP));
        assertThrows(CircuitOpenException.class, () -> a.execute(OP, () -> "rejected"));
    }

    @Test
    void aCountWindowOfFiftyOpensAtTheCallCrossingIt() throws Exception {
        CircuitBreaker a = keep(windowed(SlidingWindowType.COUNT_BASED, 50).store(backend).closeStore(false));
        CircuitBreaker b = keep(windowed(SlidingWindowType.COUNT_BASED, 50).store(backend).closeStore(false));
        for (int i = 0; i < 40; i++) {
            succeed(i % 2 == 0 ? a : b);
        }
        for (int i = 0; i < 24; i++) { // the last 50: 26 successes, 24 failures
            fail(i % 2 == 0 ? a : b);
        }
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
        fail(a); // 25 of 50
        assertEquals(BreakerStatus.OPEN, b.status(OP));
        BreakerState s = a.state(OP);
        assertEquals(50, s.window().calls());
        assertEquals(25, s.window().failures());
    }

    @Test
    void callsThatHangOpenTheBreakerBeforeAnyOfThemEnds() throws Exception {
        CircuitBreaker cb = keep(CircuitBreaker.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 10)
                .minimumNumberOfCalls(4).slowCallRateThreshold(100).slowCallDurationThreshold(Duration.ofMillis(50))
                .store(backend).closeStore(false));
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<String>> hung = new CopyOnWriteArrayList<>();
            for (int i = 0; i < 4; i++) {
                hung.add(pool.submit(() -> cb.execute(OP, () -> {
                    release.await();
                    throw new IOException("gave up");
                })));
            }
            awaitStatus(cb, BreakerStatus.OPEN);
            for (Future<String> f : hung) {
                assertFalse(f.isDone(), "the breaker opened while every call still ran");
            }
            assertEquals(4, cb.state(OP).window().slowCalls());
            assertThrows(CircuitOpenException.class, () -> cb.execute(OP, () -> "rejected"));
            release.countDown();
            for (Future<String> f : hung) {
                assertThrows(Exception.class, f::get);
            }
        } finally {
            release.countDown();
            pool.shutdownNow();
        }
        BreakerState s = cb.state(OP);
        assertEquals(4, s.window().calls(), "each slow call counted once");
        assertEquals(4, s.failures(), "their failures arrived while open");
    }

    @Test
    void aSlowCallThatFailsIsMarkedFailedInPlace() throws Exception {
        CircuitBreaker cb = keep(CircuitBreaker.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 10)
                .minimumNumberOfCalls(10).slowCallDurationThreshold(Duration.ofMillis(30))
                .store(backend).closeStore(false));
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<String> call = pool.submit(() -> cb.execute(OP, () -> {
                release.await();
                throw new IOException("late failure");
            }));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (cb.state(OP).window() == null && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(1, cb.state(OP).window().slowCalls(), "counted while it ran");
            assertEquals(0, cb.state(OP).window().failures());
            release.countDown();
            assertThrows(Exception.class, call::get);
        } finally {
            release.countDown();
            pool.shutdownNow();
        }
        BreakerState s = cb.state(OP);
        assertEquals(1, s.window().calls());
        assertEquals(1, s.window().failures());
        assertEquals(1, s.window().slowCalls());
        succeed(cb);
        assertEquals(2, cb.state(OP).window().calls(), "a fast call is recorded when it ends");
        assertEquals(1, cb.state(OP).window().slowCalls());
    }

    @Test
    void metricsOnlyNeverRejectsAndPublishesWhatWouldOpen() throws Exception {
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        CircuitBreaker cb = keep(windowed(SlidingWindowType.COUNT_BASED, 10).minimumNumberOfCalls(4)
                .mode(BreakerMode.METRICS_ONLY).onStateChange(events::add));
        for (int i = 0; i < 8; i++) {
            fail(cb);
        }
        assertEquals(BreakerStatus.CLOSED, cb.status(OP));
        assertEquals(List.of(TransitionKind.WOULD_OPEN, TransitionKind.WOULD_OPEN),
                events.stream().map(TransitionEvent::kind).toList());
    }

    @Test
    void anOperatorsModeReachesEveryInstanceAndResetReturnsToTheBuildersMode() throws Exception {
        CircuitBreaker a = keep(windowed(SlidingWindowType.COUNT_BASED, 10).minimumNumberOfCalls(2).store(backend)
                .closeStore(false));
        CircuitBreaker b = keep(windowed(SlidingWindowType.COUNT_BASED, 10).minimumNumberOfCalls(2).store(backend)
                .closeStore(false));
        a.forceMode(OP, BreakerMode.DISABLED);
        for (int i = 0; i < 5; i++) {
            fail(b);
        }
        assertEquals(BreakerMode.DISABLED, b.state(OP).mode());
        assertEquals(null, b.state(OP).window(), "a disabled breaker records nothing");
        b.forceMode(OP, BreakerMode.METRICS_ONLY);
        fail(a);
        fail(a);
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
        a.reset(OP);
        assertEquals(BreakerMode.DEFAULT, b.state(OP).mode());
        fail(b);
        fail(b);
        assertEquals(BreakerStatus.OPEN, a.status(OP));
        long version = a.state(OP).version();
        a.forceMode(OP, BreakerMode.NORMAL);
        a.forceMode(OP, BreakerMode.NORMAL);
        assertEquals(version + 1, a.state(OP).version(), "a mode already in force is not written again");
        assertThrows(NullPointerException.class, () -> a.forceMode(OP, null));
    }

    /**
     * Local mode counts a window in place; the state it answers is exactly what the rules give, outcome by outcome,
     * across bucket roll-overs, openings and resets (random sequences, both window types).
     */
    @Test
    void localModesInPlaceWindowIsExactlyTheRules() throws Exception {
        java.util.Random r = new java.util.Random(11);
        for (int round = 0; round < 40; round++) {
            SlidingWindowType type = r.nextBoolean() ? SlidingWindowType.COUNT_BASED : SlidingWindowType.TIME_BASED;
            try (CircuitBreaker cb = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0)
                    .slidingWindow(type, 1 + r.nextInt(type == SlidingWindowType.COUNT_BASED ? 8 : 200))
                    .minimumNumberOfCalls(1 + r.nextInt(6)).failureRateThreshold(20 + r.nextInt(81)).build()) {
                dev.redeye.api.Policy p = cb.config().policy();
                BreakerState model = null;
                for (int step = 0; step < 60; step++) {
                    clock.advanceMillis(r.nextInt(4) == 0 ? 0 : r.nextInt(5_000));
                    boolean success = r.nextInt(3) > 0;
                    if (success) {
                        succeed(cb);
                    } else {
                        fail(cb);
                    }
                    model = dev.redeye.spi.Transitions.recordOutcome(model, success, p, clock.millis()).state();
                    if (r.nextInt(10) == 0) { // a read in the middle folds the window back; counting goes on after
                        assertEquals(model, cb.state(OP), "round " + round + " step " + step);
                    }
                    if (model.open()) {
                        assertEquals(model, cb.state(OP), "round " + round + " step " + step + " (opened)");
                        cb.reset(OP);
                        model = dev.redeye.spi.Transitions.force(model, BreakerStatus.CLOSED, p, clock.millis())
                                .state();
                    }
                }
                assertEquals(model, cb.state(OP), "round " + round);
            }
        }
    }

    @Test
    void aSlowCallThresholdNeedsTheSlidingWindowStrategy() {
        InvalidOptionException e = assertThrows(InvalidOptionException.class,
                () -> CircuitBreaker.builder().slowCallDurationThreshold(Duration.ofSeconds(1)).build());
        assertEquals("slowCallDurationThreshold", e.option());
    }

    private static void awaitStatus(CircuitBreaker cb, BreakerStatus wanted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (cb.status(OP) != wanted && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(wanted, cb.status(OP));
    }
}
