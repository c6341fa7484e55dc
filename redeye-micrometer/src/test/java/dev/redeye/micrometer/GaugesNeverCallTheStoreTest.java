package dev.redeye.micrometer;

import static dev.redeye.micrometer.Fixtures.failing;
import static dev.redeye.micrometer.Fixtures.succeed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.CountingStore;
import dev.redeye.tck.MutableClock;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Reading every meter (what a scrape does) makes no store operation: counted with {@link CountingStore} around a
 * real Redis store, while the breaker is closed, open and half-open.
 */
class GaugesNeverCallTheStoreTest {
    private static final String OP = "search";

    @Test
    void scrapingEveryMeterMakesNoStoreOperation() throws Exception {
        MutableClock clock = Fixtures.clock();
        CountingStore store = new CountingStore(Fixtures.redis(Fixtures.newPrefix()));
        MeterRegistry registry = new SimpleMeterRegistry();
        try (CircuitBreaker b = CircuitBreaker.builder().store(store).clock(clock).ticker(clock).failureThreshold(2)
                .resetTimeout(Duration.ofSeconds(5)).jitter(0).build();
                RedeyeMetrics metrics = RedeyeMetrics.of(b)) {
            metrics.bindTo(registry);
            succeed(b, OP);
            scrapeWithoutStoreOperations(registry, store, "closed");
            failing(b, OP);
            failing(b, OP);
            scrapeWithoutStoreOperations(registry, store, "open");
            clock.advance(Duration.ofSeconds(5));
            scrapeWithoutStoreOperations(registry, store, "half_open");

            long before = store.snapshot().total();
            b.status(OP);
            assertEquals(before + 1, store.snapshot().total(), "control: a status() read is counted");
            store.delete(OP);
        }
    }

    private static void scrapeWithoutStoreOperations(MeterRegistry registry, CountingStore store, String state) {
        long before = store.snapshot().total();
        double sum = 0;
        int meters = 0;
        for (int i = 0; i < 100; i++) {
            for (Meter m : registry.getMeters()) {
                for (Measurement x : m.measure()) {
                    sum += x.getValue();
                }
                meters++;
            }
        }
        assertTrue(meters > 100 && !Double.isNaN(sum), "the scrape read " + meters + " meters");
        assertEquals(1.0, registry.get(RedeyeMetrics.STATE).tags("name", OP, "state", state).gauge().value(),
                "the gauge shows " + state);
        assertEquals(before, store.snapshot().total(), "store operations made by scraping while " + state);
    }
}
