package dev.redeye.spring.boot.actuate;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerConfig;
import dev.redeye.Metrics;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.Transitions;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.lang.Nullable;

/**
 * The Actuator endpoint {@code redeye}: the application's breakers and the operations each holds, and the
 * operator's fleet-wide levers. Like every Actuator endpoint but {@code health}, it is not exposed over HTTP
 * until the application says so ({@code management.endpoints.web.exposure.include=health,redeye}); secure it
 * as any Actuator write endpoint (Spring Security, a management port).
 *
 * <ul>
 * <li>{@code GET /actuator/redeye}: every breaker with a summary of its configuration and, for each operation
 * it holds, the status this instance knows ({@link CircuitBreaker#localStatus(String)}) and this instance's
 * counters ({@link CircuitBreaker#metrics(String)}). <b>No store call</b>: a scrape never loads the store.
 * In distributed mode an instance knows a closed state only from its own calls, the feed (with the Micrometer
 * binding or the local cache on) and open states it met; the single-operation read below asks the store.</li>
 * <li>{@code GET /actuator/redeye/{breaker}/{operation}}: the stored state of one operation: <b>one store
 * read</b>. 404 for an unknown breaker, and for an operation the breaker does not hold and the store has no
 * state for. A read creates nothing: no operation is registered, no meter appears, nothing is written.</li>
 * <li>{@code POST /actuator/redeye/{breaker}/{operation}} with {@code {"action": "force-open"}},
 * {@code "force-half-open"}, {@code "reset"}, or {@code {"action": "force-mode", "mode": "metrics_only"}}
 * (modes {@code default}, {@code normal}, {@code metrics_only}, {@code disabled}): the same atomic transition as
 * {@link CircuitBreaker#forceOpen}, {@link CircuitBreaker#forceHalfOpen}, {@link CircuitBreaker#reset} and
 * {@link CircuitBreaker#forceMode}, for every instance sharing the store, then one read to answer with the new
 * state. 400 for an unknown breaker, a missing action or an unknown one, and a missing or unknown mode.</li>
 * </ul>
 *
 * Over HTTP, {@link RedeyeEndpointWebExtension} serves the two per-operation requests with error bodies that say
 * why (Actuator's own 400 carries no reason).
 *
 * Operation names that contain a {@code /} cannot be named in a URL path; use the breaker's API for them.
 */
@Endpoint(id = "redeye")
public class RedeyeEndpoint {
    /** The actions {@link #change} takes, in the order messages list them. */
    public static final List<String> ACTIONS = List.of("force-open", "force-half-open", "reset", "force-mode");

    private final RedeyeCircuitBreakers breakers;

    /** An endpoint over the application's breakers. */
    public RedeyeEndpoint(RedeyeCircuitBreakers breakers) {
        this.breakers = breakers;
    }

    /** Every breaker and the operations it holds; no store call. */
    @ReadOperation
    public BreakersDescriptor breakers() {
        Map<String, BreakerDescriptor> out = new LinkedHashMap<>();
        for (Map.Entry<String, CircuitBreaker> e : breakers.asMap().entrySet()) {
            CircuitBreaker b = e.getValue();
            Map<String, OperationSummary> ops = new TreeMap<>();
            for (Map.Entry<String, Metrics> m : b.allMetrics().entrySet()) {
                ops.put(m.getKey(), OperationSummary.of(b.localStatus(m.getKey()), m.getValue()));
            }
            out.put(e.getKey(), new BreakerDescriptor(ConfigSummary.of(b.config(), b.isLocalCacheActive()), ops));
        }
        return new BreakersDescriptor(breakers.storeDescription(), out);
    }

    /**
     * The stored state of one operation (one store read), or null (404) for an unknown breaker or an unknown
     * operation: one the breaker does not hold and the store has no state for. A read never creates anything:
     * an operation this instance does not hold is read with {@link CircuitBreaker#storedState(String)}, which
     * registers nothing (no counters, no meters) and writes nothing, so requests naming made-up operations grow
     * neither the meter registry nor the store.
     */
    @ReadOperation
    public OperationDescriptor operation(@Selector String breaker, @Selector String operation) {
        CircuitBreaker b = breakers.find(breaker).orElse(null);
        if (b == null) {
            return null;
        }
        if (b.holds(operation)) {
            return read(breaker, b, operation);
        }
        Optional<BreakerState> stored;
        try {
            stored = b.storedState(operation);
        } catch (StoreException e) {
            return OperationDescriptor.of(breaker, operation, null, null, e.getMessage());
        }
        if (stored.isEmpty()) {
            return null;
        }
        // not held here: the nominal status (no jitter of this instance's), as every instance would compute it
        BreakerState s = stored.get();
        long now = b.config().clock().millis();
        BreakerStatus status = Transitions.status(s, b.config().policy(), now, 1.0);
        return OperationDescriptor.of(breaker, operation, status, s, b.config().policy(), now, null);
    }

    /**
     * Forces {@code operation} of {@code breaker} open, half-open, or closed (reset), for every instance sharing
     * the store.
     *
     * @param action {@code force-open}, {@code force-half-open}, {@code reset} or {@code force-mode} (case and
     *               {@code _} for {@code -} do not matter)
     * @param mode   the mode of {@code force-mode} ({@link BreakerMode#fromName}); ignored by the other actions
     * @throws InvalidEndpointRequestException (400) for an unknown breaker, a missing action or an unknown one,
     *                                         with a message naming the breakers or the actions there are, or a
     *                                         missing or unknown mode
     * @throws StoreException                  (500) if the store fails
     */
    @WriteOperation
    public OperationDescriptor change(@Selector String breaker, @Selector String operation, @Nullable String action,
            @Nullable String mode) {
        CircuitBreaker b = breakers.find(breaker).orElseThrow(() -> new InvalidEndpointRequestException(
                unknownBreaker(breakers, breaker), "unknown breaker"));
        if (action == null || action.isBlank()) {
            throw new InvalidEndpointRequestException("missing action: give one of " + String.join(", ", ACTIONS)
                    + ", as {\"action\": \"reset\"}", "missing action");
        }
        switch (action.trim().toLowerCase(Locale.ROOT).replace("_", "-")) {
            case "force-open" -> b.forceOpen(operation);
            case "force-half-open" -> b.forceHalfOpen(operation);
            case "reset" -> b.reset(operation);
            case "force-mode" -> b.forceMode(operation, mode(mode));
            default -> throw new InvalidEndpointRequestException("unknown action '" + action + "': the actions are "
                    + String.join(", ", ACTIONS), "unknown action");
        }
        return read(breaker, b, operation);
    }

    private static BreakerMode mode(String mode) {
        if (mode == null || mode.isBlank()) {
            throw new InvalidEndpointRequestException("missing mode: give one of default, normal, metrics_only, "
                    + "disabled, as {\"action\": \"force-mode\", \"mode\": \"metrics_only\"}", "missing mode");
        }
        try {
            return BreakerMode.fromName(mode.trim());
        } catch (IllegalArgumentException e) {
            throw new InvalidEndpointRequestException(e.getMessage(), "unknown mode");
        }
    }

    /** The message of a request naming a breaker there is not. */
    static String unknownBreaker(RedeyeCircuitBreakers breakers, String breaker) {
        return "no breaker named '" + breaker + "'; breakers: " + breakers.names();
    }

    private static OperationDescriptor read(String breaker, CircuitBreaker b, String operation) {
        try {
            BreakerState s = b.state(operation);
            // after the read this instance's view is that state: localStatus applies its own jitter to it
            return OperationDescriptor.of(breaker, operation, b.localStatus(operation), s, b.config().policy(),
                    b.config().clock().millis(), null);
        } catch (StoreException e) {
            return OperationDescriptor.of(breaker, operation, b.localStatus(operation), null, e.getMessage());
        }
    }

    /** Every breaker by name, and what they share. */
    public record BreakersDescriptor(String store, Map<String, BreakerDescriptor> breakers)
            implements OperationResponseBody {
    }

    /** One breaker: its configuration summary and its operations (by name). */
    public record BreakerDescriptor(ConfigSummary config, Map<String, OperationSummary> operations) {
    }

    /** The options an operator asks about first. */
    public record ConfigSummary(String strategy, int failureThreshold, double errorRateThreshold,
            String resetTimeout, String maxResetTimeout, int halfOpenPermits, String storeErrorPolicy,
            boolean localCacheActive) {
        static ConfigSummary of(CircuitBreakerConfig c, boolean cache) {
            return new ConfigSummary(c.strategy().wireName(), c.failureThreshold(), c.errorRateThreshold(),
                    c.resetTimeout().toString(), c.maxResetTimeout().toString(), c.halfOpenPermits(),
                    c.storeErrorPolicy().name(), cache);
        }
    }

    /** An operation as this instance knows it, with this instance's counters. */
    public record OperationSummary(BreakerStatus status, long calls, long successes, long failures, long ignored,
            long rejections, long storeErrors, long trials) {
        static OperationSummary of(BreakerStatus s, Metrics m) {
            return new OperationSummary(s, m.calls(), m.successes(), m.failures(), m.ignored(), m.rejections(),
                    m.storeErrors(), m.trials());
        }
    }

    /**
     * The stored state of one operation; {@code storeError} set (and the state fields empty) when the store
     * could not be read. {@code retryAfter} (ISO-8601) is how long until a trial may be tried: the rest of the
     * nominal open window when OPEN, {@code PT0S} when HALF_OPEN, and null when there is none: CLOSED, or
     * FORCED_OPEN, which admits no trial until it is reset.
     */
    public record OperationDescriptor(String breaker, String operation, BreakerStatus status, Integer failures,
            String openedAt, Integer openCount, Boolean forced, String mode, String window, Long version,
            String retryAfter, String storeError)
            implements OperationResponseBody {
        static OperationDescriptor of(String breaker, String op, BreakerStatus status, BreakerState s, String error) {
            return of(breaker, op, status, s, null, 0L, error);
        }

        static OperationDescriptor of(String breaker, String op, BreakerStatus status, BreakerState s, Policy policy,
                long now, String error) {
            if (s == null) {
                return new OperationDescriptor(breaker, op, status, null, null, null, null, null, null, null, null,
                        error);
            }
            String retryAfter = null;
            if (status == BreakerStatus.HALF_OPEN) {
                retryAfter = Duration.ZERO.toString();
            } else if (status == BreakerStatus.OPEN && policy != null) {
                retryAfter = Duration.ofMillis(Math.max(0, Transitions.trialEligibleAt(s, policy, 1.0) - now))
                        .toString();
            }
            return new OperationDescriptor(breaker, op, status, s.failures(),
                    s.openedAt() == 0 ? null : Instant.ofEpochMilli(s.openedAt()).toString(), s.openCount(),
                    s.forced(), s.mode().wireName(), s.window() == null ? null : s.window().encode(), s.version(),
                    retryAfter, null);
        }
    }
}
