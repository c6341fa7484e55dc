package dev.redeye.micrometer;

import static dev.redeye.micrometer.Fixtures.calls;
import static dev.redeye.micrometer.Fixtures.counter;
import static dev.redeye.micrometer.Fixtures.failing;
import static dev.redeye.micrometer.Fixtures.gauge;
import static dev.redeye.micrometer.Fixtures.succeed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.spi.Store;
import dev.redeye.tck.MutableClock;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The meters after a scripted life of one operation over a real breaker, in local mode and over Redis: 3
 * successes, 5 failures (the breaker opens), a rejection, the reset window (half-open), a successful trial
 * (closed). Names, tags and values are asserted one by one.
 */
class ScriptedSequenceTest {
    private static final String OP = "payment-gateway";

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"local", "redis"})
    void metersFollowTheScript(String mode) throws Exception {
        MutableClock clock = Fixtures.clock();
        String prefix = Fixtures.newPrefix();
        Store store = mode.equals("redis") ? Fixtures.redis(prefix) : null;
        CircuitBreakerBuilder builder = CircuitBreaker.builder().clock(clock).failureThreshold(5)
                .resetTimeout(Duration.ofSeconds(10)).jitter(0);
        if (store != null) {
            builder.store(store);
        }
        MeterRegistry registry = new SimpleMeterRegistry();
        try (CircuitBreaker b = builder.build();
                RedeyeMetrics metrics = RedeyeMetrics.builder(b).tags("app", "checkout").timeEveryCall().build()) {
            metrics.bindTo(registry);
            for (int i = 0; i < 3; i++) {
                assertEquals("ok", succeed(b, OP));
            }
            assertState(registry, "closed");
            for (int i = 0; i < 5; i++) {
                failing(b, OP);
            }
            assertState(registry, "open");
            assertThrows(CircuitOpenException.class, () -> succeed(b, OP));
            clock.advance(Duration.ofSeconds(10));
            assertState(registry, "half_open");
            assertEquals("ok", succeed(b, OP)); // the trial
            assertState(registry, "closed");

            assertEquals(4, calls(registry, OP, "successful").count(), "3 successes and the trial");
            assertEquals(5, calls(registry, OP, "failed").count());
            assertEquals(0, calls(registry, OP, "ignored").count());
            assertTrue(calls(registry, OP, "successful").totalTime(TimeUnit.NANOSECONDS) > 0,
                    "every call timed (timeEveryCall): a total time");
            assertTrue(calls(registry, OP, "failed").totalTime(TimeUnit.NANOSECONDS) > 0);
            assertEquals(1, counter(registry, RedeyeMetrics.NOT_PERMITTED, OP, "kind", "not_permitted"));
            assertEquals(1, counter(registry, RedeyeMetrics.TRIALS, OP, "outcome", "succeeded"));
            assertEquals(0, counter(registry, RedeyeMetrics.TRIALS, OP, "outcome", "failed"));
            assertEquals(0, counter(registry, RedeyeMetrics.TRIALS, OP, "outcome", "released"));
            assertTrue(registry.find(RedeyeMetrics.FAILURE_RATE).meters().isEmpty(), "consecutive strategy: no rate");
            assertTrue(registry.find(RedeyeMetrics.SLOW_CALL_RATE).meters().isEmpty(), "no strategy measures slow calls");
            assertTrue(registry.get(RedeyeMetrics.CALLS_MAX).tags("name", OP, "kind", "successful").timeGauge()
                    .value(TimeUnit.NANOSECONDS) > 0, "the longest timed call");
            assertEquals(0, gauge(registry, RedeyeMetrics.FAILURES, OP), "closed again: counters reset");

            for (Meter m : registry.getMeters()) {
                List<Tag> tags = m.getId().getTags();
                assertTrue(tags.contains(Tag.of("app", "checkout")), m.getId() + " carries the common tags");
                assertTrue(m.getId().getName().startsWith("redeye."), m.getId().toString());
            }
            if (store == null) {
                assertTrue(registry.find(RedeyeMetrics.STORE_OPERATIONS).meters().isEmpty(),
                        "local mode has no store meters");
                assertTrue(registry.find(RedeyeMetrics.STORE_ERRORS).meters().isEmpty());
            } else {
                assertStoreOperations(registry);
                b.config().store().orElseThrow().delete(OP);
            }
        }
    }

    /**
     * Exactly the store operations the engine documents: a read per call that ran (3 + 5), none for the
     * rejection (served from the open view), and for the trial a read, a claim, a re-read, the outcome and the
     * release; six updates: the five failures' and the trial's outcome, none for successes with nothing to clear.
     */
    private static void assertStoreOperations(MeterRegistry r) throws InterruptedException {
        assertEquals(10, storeOps(r, "get", "success"));
        assertEquals(6, storeOps(r, "apply", "success"));
        assertEquals(1, storeOps(r, "claimTrial", "success"));
        assertEquals(1, storeOps(r, "releaseTrial", "success"));
        assertEquals(1, storeOps(r, "subscribe", "success"), "binding subscribed the breaker to the feed");
        assertTrue(r.find(RedeyeMetrics.STORE_OPERATIONS).tag("outcome", "error").meters().isEmpty());
        assertEquals(0, counter(r, RedeyeMetrics.STORE_ERRORS, OP, "store", "RedisStore"));
        Fixtures.await("the opened and closed events on the feed", () -> feedEvents(r, "opened") == 1
                && feedEvents(r, "closed") == 1);
        assertEquals(0, r.get(RedeyeMetrics.FEED_GAPS).counter().count());
    }

    private static long storeOps(MeterRegistry r, String operation, String outcome) {
        return r.get(RedeyeMetrics.STORE_OPERATIONS).tags("store", "RedisStore", "operation", operation,
                "outcome", outcome).timer().count();
    }

    private static double feedEvents(MeterRegistry r, String kind) {
        var c = r.find(RedeyeMetrics.FEED_EVENTS).tags("kind", kind).counter();
        return c == null ? 0 : c.count();
    }

    private static void assertState(MeterRegistry r, String expected) {
        for (String s : new String[] {"closed", "open", "half_open", "forced_open"}) {
            assertEquals(s.equals(expected) ? 1.0 : 0.0, gauge(r, RedeyeMetrics.STATE, OP, "state", s),
                    "state gauge " + s + " while " + expected);
        }
    }
}
