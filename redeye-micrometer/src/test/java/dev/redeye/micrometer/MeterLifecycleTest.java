package dev.redeye.micrometer;

import static dev.redeye.micrometer.Fixtures.succeed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Meters follow the breaker's operations: they appear with an operation, go with its eviction and with close(). */
class MeterLifecycleTest {

    private static Set<String> names(MeterRegistry r) {
        Set<String> out = new TreeSet<>();
        for (Meter m : r.getMeters()) {
            String n = m.getId().getTag("name");
            if (n != null) {
                out.add(n);
            }
        }
        return out;
    }

    @Test
    void operationsHeldBeforeBindingAndAfterGetMeters() throws Exception {
        MeterRegistry r = new SimpleMeterRegistry();
        try (CircuitBreaker b = CircuitBreaker.ofDefaults(); RedeyeMetrics m = RedeyeMetrics.of(b)) {
            succeed(b, "before");
            m.bindTo(r);
            assertEquals(Set.of("before"), names(r));
            succeed(b, "after");
            assertEquals(Set.of("after", "before"), names(r));
            int perOperation = r.find(RedeyeMetrics.CALLS).tag("name", "after").meters().size();
            assertEquals(3, perOperation, "successful, failed, ignored");
            assertEquals(1.0, r.get(RedeyeMetrics.STATE).tags("name", "after", "state", "closed").gauge().value());
        }
    }

    @Test
    void evictedOperationsLoseTheirMeters() throws Exception {
        MeterRegistry r = new SimpleMeterRegistry();
        try (CircuitBreaker b = CircuitBreaker.builder().maxOperations(10).build(); RedeyeMetrics m = RedeyeMetrics.of(b)) {
            m.bindTo(r);
            for (int i = 0; i < 50; i++) {
                succeed(b, "op-" + i);
            }
            Set<String> held = b.allMetrics().keySet();
            assertTrue(held.size() <= 10, "the breaker keeps at most maxOperations: " + held);
            assertEquals(held, names(r), "meters exactly for the operations the breaker holds");
            int meters = r.getMeters().size();
            // per operation in local mode under the consecutive strategy: calls and calls.max (3 kinds each),
            // not.permitted.calls, state (4), failures, trials (3 outcomes)
            assertTrue(meters <= 10 * 15, meters + " meters for at most 10 operations");
            for (Meter x : r.getMeters()) {
                x.measure().forEach(v -> assertFalse(Double.isNaN(v.getValue()), x.getId().toString()));
            }
        }
    }

    @Test
    void closeRemovesEveryMeterFromEveryRegistry() throws Exception {
        MeterRegistry r1 = new SimpleMeterRegistry();
        MeterRegistry r2 = new SimpleMeterRegistry();
        try (CircuitBreaker b = CircuitBreaker.ofDefaults()) {
            RedeyeMetrics m = RedeyeMetrics.of(b);
            m.bindTo(r1);
            m.bindTo(r2);
            m.bindTo(r2); // no effect
            succeed(b, "x");
            assertEquals(r1.getMeters().size(), r2.getMeters().size());
            assertFalse(r1.getMeters().isEmpty());
            m.close();
            assertTrue(r1.getMeters().isEmpty());
            assertTrue(r2.getMeters().isEmpty());
            succeed(b, "y");
            assertTrue(r1.getMeters().isEmpty(), "a closed binder registers nothing more");
            assertThrows(IllegalStateException.class, () -> m.bindTo(new SimpleMeterRegistry()));
        }
    }

    @Test
    void builderRefusesBadOptions() {
        try (CircuitBreaker b = CircuitBreaker.ofDefaults()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> RedeyeMetrics.builder(b).tags("name", "x"));
            assertTrue(e.getMessage().contains("'name'"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> RedeyeMetrics.builder(b).tags("odd"));
            assertThrows(NullPointerException.class, () -> RedeyeMetrics.builder(null));
        }
    }
}
