package dev.redeye.spring.boot.actuate;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.BreakerStatus;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;

/**
 * The health of one breaker, from what this instance knows of each operation it holds
 * ({@link CircuitBreaker#localStatus(String)}: no store call). Registered for the breakers whose
 * {@code register-health-indicator} is true, under the composite contributor {@code redeyeBreakers}
 * ({@code /actuator/health/redeyeBreakers/payments}), so a health group can include one breaker:
 * {@code management.endpoint.health.group.payments.include=redeyeBreakers/payments}.
 *
 * <ul>
 * <li>{@code UP}: every operation closed (or none called yet).</li>
 * <li>{@link #CIRCUIT_OPEN}: an operation is open or forced open; {@link #CIRCUIT_HALF_OPEN}: none is, one is
 * half-open. Spring Boot's default status order does not know these codes, so they leave the application's own
 * status (and {@code /actuator/health}'s HTTP status) as the other contributors make it: an open breaker is
 * redeye doing its job. A health group that should fail on them says so, as for Resilience4j:
 * {@code management.endpoint.health.group.payments.status.order=circuit_open,down,circuit_half_open,up} and
 * {@code ...status.http-mapping.circuit_open=503}.</li>
 * <li>With {@code allow-health-indicator-to-fail}, DOWN instead of CIRCUIT_OPEN and UNKNOWN instead of
 * CIRCUIT_HALF_OPEN, as Resilience4j's {@code allowHealthIndicatorToFail} does: then an open breaker makes the
 * application DOWN.</li>
 * <li>With {@code health-reports-outlier}, {@link Status#OUT_OF_SERVICE} while this instance is an outlier for
 * one of the breaker's operations under a quorum ({@link CircuitBreaker#isOutlier}: its own failures reached the
 * threshold while the fleet stayed closed), whatever the operations' states, unless DOWN. Spring Boot's default
 * order ranks it below DOWN and maps it to HTTP 503, so a readiness group that includes this breaker
 * ({@code management.endpoint.health.group.readiness.include=readinessState,redeyeBreakers/payments}) takes the
 * one bad instance out of its load balancer while the rest of the fleet keeps serving.</li>
 * <li>Details: {@code operations}, operation to status for each operation not closed; {@code outliers}, the
 * operations this instance is an outlier for (with {@code health-reports-outlier}).</li>
 * </ul>
 *
 * Cost: a walk over the operations the breaker holds. Thread-safe.
 */
public class RedeyeBreakerHealthIndicator implements HealthIndicator {
    /** An operation of the breaker is open (or forced open). */
    public static final Status CIRCUIT_OPEN = new Status("CIRCUIT_OPEN");
    /** An operation of the breaker is half-open, none open. */
    public static final Status CIRCUIT_HALF_OPEN = new Status("CIRCUIT_HALF_OPEN");

    private final CircuitBreaker breaker;
    private final boolean allowToFail;
    private final boolean reportsOutlier;

    /**
     * An indicator that does not report outliers.
     *
     * @param breaker     the breaker
     * @param allowToFail whether an open breaker reports DOWN (and a half-open one UNKNOWN)
     */
    public RedeyeBreakerHealthIndicator(CircuitBreaker breaker, boolean allowToFail) {
        this(breaker, allowToFail, false);
    }

    /**
     * @param breaker        the breaker
     * @param allowToFail    whether an open breaker reports DOWN (and a half-open one UNKNOWN)
     * @param reportsOutlier whether this instance being an outlier reports OUT_OF_SERVICE
     */
    public RedeyeBreakerHealthIndicator(CircuitBreaker breaker, boolean allowToFail, boolean reportsOutlier) {
        this.breaker = Objects.requireNonNull(breaker, "breaker");
        this.allowToFail = allowToFail;
        this.reportsOutlier = reportsOutlier;
    }

    @Override
    public Health health() {
        Map<String, BreakerStatus> notClosed = new TreeMap<>();
        Set<String> outliers = new TreeSet<>();
        boolean open = false;
        for (String op : breaker.allMetrics().keySet()) {
            if (reportsOutlier && breaker.isOutlier(op)) {
                outliers.add(op);
            }
            BreakerStatus s = breaker.localStatus(op);
            if (s != BreakerStatus.CLOSED) {
                notClosed.put(op, s);
                open |= s == BreakerStatus.OPEN || s == BreakerStatus.FORCED_OPEN;
            }
        }
        Status status = notClosed.isEmpty() ? Status.UP
                : open ? (allowToFail ? Status.DOWN : CIRCUIT_OPEN)
                : (allowToFail ? Status.UNKNOWN : CIRCUIT_HALF_OPEN);
        if (!outliers.isEmpty() && !Status.DOWN.equals(status)) {
            status = Status.OUT_OF_SERVICE;
        }
        Health.Builder h = Health.status(status);
        if (!notClosed.isEmpty()) {
            h.withDetail("operations", notClosed);
        }
        if (!outliers.isEmpty()) {
            h.withDetail("outliers", outliers);
        }
        return h.build();
    }
}
