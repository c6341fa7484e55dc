package dev.redeye.micrometer;

import static dev.redeye.micrometer.Fixtures.failing;
import static dev.redeye.micrometer.Fixtures.gauge;
import static dev.redeye.micrometer.Fixtures.succeed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.redeye.CircuitBreaker;
import dev.redeye.CountingStore;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.spi.StoreOperation;
import dev.redeye.tck.MutableClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Two instances (two breakers over two Redis clients, each with its own registry) agree on the state after
 * one of them trips the breaker: the other learns it from the store's feed, which binding subscribed to,
 * without a call and without a store read.
 */
class FleetTest {
    private static final String OP = "inventory";
    private static final String[] STATES = {"closed", "open", "half_open", "forced_open"};

    @Test
    void twoInstancesMetersAgreeOnTheStateAfterATrip() throws Exception {
        String prefix = Fixtures.newPrefix();
        MutableClock clock = Fixtures.clock();
        MeterRegistry ra = new SimpleMeterRegistry();
        MeterRegistry rb = new SimpleMeterRegistry();
        CountingStore storeB = new CountingStore(Fixtures.redis(prefix));
        try (CircuitBreaker a = breaker(clock, prefix);
                CircuitBreaker b = CircuitBreaker.builder().store(storeB).clock(clock).ticker(clock).failureThreshold(3)
                        .resetTimeout(Duration.ofMinutes(1)).jitter(0).build();
                RedeyeMetrics ma = RedeyeMetrics.builder(a).tags("instance", "a").build();
                RedeyeMetrics mb = RedeyeMetrics.builder(b).tags("instance", "b").build()) {
            ma.bindTo(ra);
            mb.bindTo(rb);
            succeed(a, OP);
            succeed(b, OP); // both instances hold the operation: both have its meters
            assertAgree(ra, rb, "closed");

            for (int i = 0; i < 3; i++) {
                failing(a, OP);
            }
            assertEquals(1.0, gauge(ra, RedeyeMetrics.STATE, OP, "state", "open"), "A tripped it");
            long readsBefore = storeB.countOf(StoreOperation.GET);
            Fixtures.await("instance B's state gauge to show the trip",
                    () -> gauge(rb, RedeyeMetrics.STATE, OP, "state", "open") == 1.0);
            assertAgree(ra, rb, "open");
            assertEquals(readsBefore, storeB.countOf(StoreOperation.GET), "B learned it from the feed, not a read");
            assertEquals(1.0, rb.get(RedeyeMetrics.FEED_EVENTS).tags("kind", "opened").counter().count());
            assertThrows(CircuitOpenException.class, () -> succeed(b, OP), "B rejects from what it learned");
            assertEquals(readsBefore, storeB.countOf(StoreOperation.GET), "and rejects without a store read");

            clock.advance(Duration.ofMinutes(1));
            assertAgree(ra, rb, "half_open");
            succeed(b, OP); // B runs the trial and closes it for the fleet
            Fixtures.await("instance A's state gauge to show the close",
                    () -> gauge(ra, RedeyeMetrics.STATE, OP, "state", "closed") == 1.0);
            assertAgree(ra, rb, "closed");
            b.config().store().orElseThrow().delete(OP);
        }
    }

    private static CircuitBreaker breaker(MutableClock clock, String prefix) {
        return CircuitBreaker.builder().store(Fixtures.redis(prefix)).clock(clock).ticker(clock).failureThreshold(3)
                .resetTimeout(Duration.ofMinutes(1)).jitter(0).build();
    }

    private static void assertAgree(MeterRegistry ra, MeterRegistry rb, String expected) {
        for (String s : STATES) {
            double want = s.equals(expected) ? 1.0 : 0.0;
            assertEquals(want, gauge(ra, RedeyeMetrics.STATE, OP, "state", s), "instance A, state " + s);
            assertEquals(want, gauge(rb, RedeyeMetrics.STATE, OP, "state", s), "instance B, state " + s);
        }
    }
}
