package dev.redeye.spring.boot.actuate;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.BreakerStatus;
import dev.redeye.spi.Store;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/**
 * Actuator health of redeye, under the key {@code redeye}: whether the shared store answers, and which
 * breakers this instance knows to be open.
 *
 * <ul>
 * <li><b>UP</b> when the store answers one read ({@code get} of the key {@value #PROBE_KEY}, which redeye
 * never writes), or in local mode (no store).</li>
 * <li><b>DOWN</b> only when that read throws: the store is unreachable, so breakers run under their
 * {@code store-error-policy}. Never DOWN because a breaker is open: an open breaker is redeye doing its job
 * for a failing dependency, not this application being unhealthy. Note that Spring Boot's liveness and
 * readiness groups do not include this indicator unless you add it.</li>
 * <li>Details: {@code store} (a redacted URI, or the client bean's name; never a password), and {@code open}:
 * breaker name to operation to status ({@code OPEN}, {@code HALF_OPEN}, {@code FORCED_OPEN}) for each
 * operation not closed, as this instance knows it ({@link CircuitBreaker#localStatus(String)}: no store call).
 * Operations this instance never called are not listed.</li>
 * </ul>
 *
 * Cost: one store read per health check, plus a walk over the operations each breaker holds. Thread-safe.
 */
public class RedeyeHealthIndicator implements HealthIndicator {
    /** The key the probe reads; redeye writes nothing under it. */
    public static final String PROBE_KEY = "redeye-health-probe";

    private final RedeyeCircuitBreakers breakers;
    private final Store store;

    /**
     * @param breakers the application's breakers
     * @param store    the store they share, or null in local mode
     */
    public RedeyeHealthIndicator(RedeyeCircuitBreakers breakers, Store store) {
        this.breakers = breakers;
        this.store = store;
    }

    @Override
    public Health health() {
        Health.Builder h = Health.up();
        if (store != null) {
            try {
                store.get(PROBE_KEY);
            } catch (RuntimeException e) {
                h = Health.down().withDetail("error", e.getClass().getName() + ": " + e.getMessage());
            }
        }
        h.withDetail("store", breakers.storeDescription());
        Map<String, Map<String, BreakerStatus>> open = openOperations(breakers);
        if (!open.isEmpty()) {
            h.withDetail("open", open);
        }
        return h.build();
    }

    /** Breaker to operation to status, for every operation not closed as each breaker knows it. */
    static Map<String, Map<String, BreakerStatus>> openOperations(RedeyeCircuitBreakers breakers) {
        Map<String, Map<String, BreakerStatus>> out = new TreeMap<>();
        for (Map.Entry<String, CircuitBreaker> b : breakers.asMap().entrySet()) {
            for (String op : b.getValue().allMetrics().keySet()) {
                BreakerStatus s = b.getValue().localStatus(op);
                if (s != BreakerStatus.CLOSED) {
                    out.computeIfAbsent(b.getKey(), k -> new TreeMap<>()).put(op, s);
                }
            }
        }
        return out;
    }
}
