package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerObserver.CallTiming;
import dev.redeye.micrometer.MeterNaming;
import dev.redeye.micrometer.RedeyeMetrics;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One {@link RedeyeMetrics} per breaker of the registry, tagged {@code breaker=<name>} and named as
 * {@code redeye.metrics.naming} says, bound to every
 * registry this binder is bound to (RedeyeMetrics binds a registry once however often it is asked).
 * {@link #close()} removes every meter and unregisters from the breakers. Thread-safe.
 */
final class RedeyeMeterBinder implements MeterBinder, AutoCloseable {
    private final List<RedeyeMetrics> metrics = new ArrayList<>();

    RedeyeMeterBinder(RedeyeCircuitBreakers breakers, CallTiming timing, MeterNaming naming) {
        for (Map.Entry<String, CircuitBreaker> e : breakers.asMap().entrySet()) {
            RedeyeMetrics.Builder b = RedeyeMetrics.builder(e.getValue()).tags("breaker", e.getKey()).naming(naming);
            if (timing == CallTiming.EVERY_CALL) {
                b.timeEveryCall();
            } else if (timing == CallTiming.NONE) {
                b.timeNoCall();
            }
            metrics.add(b.build());
        }
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (RedeyeMetrics m : metrics) {
            m.bindTo(registry);
        }
    }

    @Override
    public void close() {
        for (RedeyeMetrics m : metrics) {
            m.close();
        }
    }

    @Override
    public String toString() {
        return "RedeyeMeterBinder[" + metrics.size() + " breakers]";
    }
}
