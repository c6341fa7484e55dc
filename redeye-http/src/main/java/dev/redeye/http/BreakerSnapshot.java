package dev.redeye.http;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * One rule's breaker as read from its store at one instant: what {@link HttpBreakers#snapshots()} returns and
 * {@link HttpBreakers#printStatus} prints one line of.
 *
 * @param level            the rule's level
 * @param key              the rule's key
 * @param status           the status as this instance sees it (with its own jitter)
 * @param failureThreshold the rule's effective failureThreshold
 * @param retryAfter       how long until a request may try the breaker: for an OPEN one, until this instance may
 *                         try a trial (nominal window, no jitter); zero when CLOSED or HALF_OPEN; empty when
 *                         FORCED_OPEN, which admits no request until it is reset
 * @param state            the stored state
 */
public record BreakerSnapshot(Level level, String key, BreakerStatus status, int failureThreshold,
        Optional<Duration> retryAfter, BreakerState state) {

    /** @throws NullPointerException if an object component is null */
    public BreakerSnapshot {
        Objects.requireNonNull(level, "level");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(retryAfter, "retryAfter");
        Objects.requireNonNull(state, "state");
    }

    /** The breaker's operation name, {@code "<level>:<key>"}. */
    public String operation() {
        return level.wireName() + ":" + key;
    }

    /**
     * One line: {@code "endpoint  /v1/charges  OPEN  failures 3/3  retry in 12.5 s"}, or {@code "... until reset"}
     * for a forced-open one (fixed-width columns for the level and status, so lines of one print align well
     * enough; the key is printed in full).
     */
    public String line() {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-8s  %s  %-11s  failures %d/%d",
                level.wireName(), key, status, state.failures(), failureThreshold));
        if (status == BreakerStatus.OPEN && retryAfter.isPresent()) {
            sb.append(String.format(Locale.ROOT, "  retry in %.1f s", retryAfter.get().toMillis() / 1000.0));
        } else if (status == BreakerStatus.FORCED_OPEN) {
            sb.append("  until reset");
        }
        if (state.openCount() > 0) {
            sb.append("  failed trials ").append(state.openCount());
        }
        return sb.toString();
    }
}
