package dev.redeye.micrometer;

import static dev.redeye.micrometer.Fixtures.counter;
import static dev.redeye.micrometer.Fixtures.failing;
import static dev.redeye.micrometer.Fixtures.gauge;
import static dev.redeye.micrometer.Fixtures.succeed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.InMemoryStore;
import dev.redeye.OutlierPolicy;
import dev.redeye.tck.MutableClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Under a quorum, {@code outlier} shows while this instance is an outlier and {@code outlier.trips} counts its
 * local trips; without a quorum neither meter exists.
 */
class OutlierMetersTest {
    private static final String OP = "payments";

    private static CircuitBreaker instance(InMemoryStore store, MutableClock clock, String id) {
        return CircuitBreaker.builder().store(store).clock(clock).ticker(clock).failureThreshold(3).quorum(2)
                .instanceId(id).outlierPolicy(OutlierPolicy.REJECT).resetTimeout(Duration.ofSeconds(30)).jitter(0)
                .build();
    }

    @Test
    void anOutliersTripIsCountedAndShownForItsResetWindow() throws Exception {
        MutableClock clock = Fixtures.clock();
        MeterRegistry ra = new SimpleMeterRegistry();
        MeterRegistry rb = new SimpleMeterRegistry();
        try (InMemoryStore store = new InMemoryStore();
                CircuitBreaker a = instance(store, clock, "pod-a");
                CircuitBreaker b = instance(store, clock, "pod-b");
                RedeyeMetrics ma = RedeyeMetrics.of(a);
                RedeyeMetrics mb = RedeyeMetrics.of(b)) {
            ma.bindTo(ra);
            mb.bindTo(rb);
            succeed(a, OP);
            succeed(b, OP);
            assertEquals(0.0, gauge(ra, RedeyeMetrics.OUTLIER, OP));
            assertEquals(0.0, counter(ra, RedeyeMetrics.OUTLIER_TRIPS, OP));

            for (int i = 0; i < 3; i++) {
                failing(a, OP);
            }
            assertTrue(a.isOutlier(OP));
            assertEquals(1.0, gauge(ra, RedeyeMetrics.OUTLIER, OP), "A is an outlier");
            assertEquals(1.0, counter(ra, RedeyeMetrics.OUTLIER_TRIPS, OP), "one trip");
            assertEquals(0.0, gauge(rb, RedeyeMetrics.OUTLIER, OP), "B is not");
            assertEquals(0.0, counter(rb, RedeyeMetrics.OUTLIER_TRIPS, OP));
            succeed(b, OP); // the fleet stayed closed: B's calls are admitted

            clock.advance(Duration.ofSeconds(30));
            assertEquals(0.0, gauge(ra, RedeyeMetrics.OUTLIER, OP), "the local trip lasts one reset window");
            assertEquals(1.0, counter(ra, RedeyeMetrics.OUTLIER_TRIPS, OP), "a counter keeps the trip");
        }
    }

    @Test
    void withoutAQuorumThereAreNoOutlierMeters() throws Exception {
        MeterRegistry r = new SimpleMeterRegistry();
        try (CircuitBreaker local = CircuitBreaker.builder().failureThreshold(3).build();
                RedeyeMetrics m = RedeyeMetrics.of(local)) {
            m.bindTo(r);
            succeed(local, OP);
            assertEquals(null, r.find(RedeyeMetrics.OUTLIER).gauge());
            assertEquals(null, r.find(RedeyeMetrics.OUTLIER_TRIPS).functionCounter());
        }
    }
}
