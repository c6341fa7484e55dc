package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Many real threads reach trial eligibility at once: exactly {@code halfOpenPermits} of them run a trial. Each
 * trial holds until every thread has tried, so a gate that let a second wave through would be caught.
 */
class ConcurrentTrialsTest {
    private static final String OP = "search";
    private static final int CALLERS = 16;

    @ParameterizedTest(name = "permits={0}, distributed={1}")
    @CsvSource({"1, false", "3, false", "1, true", "3, true"})
    void exactlyPermitsTrialsRunAtEligibility(int permits, boolean distributed) throws Exception {
        MutableClock clock = new MutableClock();
        InMemoryStore backend = new InMemoryStore();
        List<CircuitBreaker> breakers = new ArrayList<>();
        for (int i = 0; i < (distributed ? 2 : 1); i++) {
            CircuitBreakerBuilder b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                    .resetTimeout(Duration.ofSeconds(5)).halfOpenPermits(permits).successThreshold(permits);
            if (distributed) {
                b.store(backend.newClient());
            }
            breakers.add(b.build());
        }
        ExecutorService pool = Executors.newFixedThreadPool(CALLERS);
        try {
            try {
                breakers.get(0).execute(OP, () -> {
                    throw new IOException("down");
                });
            } catch (IOException expected) {
                // opens the breaker
            }
            clock.advance(Duration.ofSeconds(5));
            CountDownLatch attempted = new CountDownLatch(CALLERS);
            AtomicInteger trials = new AtomicInteger();
            AtomicInteger rejectedHalfOpen = new AtomicInteger();
            Together.run(pool, CALLERS, t -> {
                CircuitBreaker breaker = breakers.get(t % breakers.size());
                try {
                    breaker.execute(OP, () -> {
                        trials.incrementAndGet();
                        attempted.countDown();
                        // hold the permit until every caller has tried
                        assertTrue(attempted.await(30, TimeUnit.SECONDS));
                        return "trial";
                    });
                } catch (CircuitOpenException e) {
                    assertEquals(BreakerStatus.HALF_OPEN, e.status());
                    rejectedHalfOpen.incrementAndGet();
                    attempted.countDown();
                }
            });
            assertEquals(permits, trials.get(), "trials run");
            assertEquals(CALLERS - permits, rejectedHalfOpen.get(), "callers rejected");
            long recordedTrials = breakers.stream().mapToLong(b -> b.metrics(OP).trials()).sum();
            assertEquals(permits, recordedTrials);
            assertEquals(BreakerStatus.CLOSED, breakers.get(0).status(OP), "permits successes close");
        } finally {
            pool.shutdownNow();
            breakers.forEach(CircuitBreaker::close);
            backend.close();
        }
    }

    /**
     * 8 threads over two breakers fail calls until rejected: the failure that reaches the threshold opens the
     * breaker exactly once, so exactly one onStateChange(OPENED) fires across the fleet, and no failure recorded
     * before the opening is lost. A get-then-put gate would lose counts and report the opening more than once.
     */
    @Test
    void racingFailuresOpenOnceAndAreCountedExactly() throws Exception {
        MutableClock clock = new MutableClock();
        InMemoryStore backend = new InMemoryStore();
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        int threshold = 400;
        List<CircuitBreaker> breakers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            breakers.add(CircuitBreaker.builder().clock(clock).ticker(clock).failureThreshold(threshold)
                    .store(backend.newClient()).onStateChange(events::add).build());
        }
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            AtomicInteger ran = new AtomicInteger();
            Together.run(pool, 8, t -> {
                CircuitBreaker breaker = breakers.get(t % 2);
                while (true) {
                    try {
                        breaker.execute(OP, () -> {
                            ran.incrementAndGet();
                            throw new IOException("down");
                        });
                    } catch (IOException counted) {
                        // keep failing
                    } catch (CircuitOpenException open) {
                        return;
                    }
                }
            });
            assertEquals(List.of(TransitionKind.OPENED), events.stream().map(TransitionEvent::kind).toList());
            // every call that ran was counted: the ones before the opening and the ones already past the gate
            assertEquals(ran.get(), backend.get(OP).orElseThrow().failures());
            assertTrue(ran.get() >= threshold);
        } finally {
            pool.shutdownNow();
            breakers.forEach(CircuitBreaker::close);
            backend.close();
        }
    }
}
