package dev.redeye.http;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.TransitionEvent;
import java.util.Objects;

/**
 * One transition of one rule's breaker, as passed to per-rule and registry-wide {@code onStateChange}
 * callbacks: which level and rule key, and the engine's {@link TransitionEvent} (operation name, kind, the new
 * state with its version).
 *
 * <p>Fired on the instance whose own write caused the transition (the engine's {@code onStateChange}), so in a
 * fleet sharing a store one instance reports each transition, not every instance.
 *
 * @param level the rule's level
 * @param key   the rule's key (its {@code name}, or its {@code match} when unnamed)
 * @param event the engine's event; {@code event.operation()} is {@code "<level>:<key>"}
 */
public record HttpStateChange(Level level, String key, TransitionEvent event) {

    /** @throws NullPointerException if a component is null */
    public HttpStateChange {
        Objects.requireNonNull(level, "level");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(event, "event");
    }

    /** The status before the transition. */
    public BreakerStatus from() {
        return event.from();
    }

    /** The status after the transition. */
    public BreakerStatus to() {
        return event.to();
    }

    /** The breaker's operation name, {@code "<level>:<key>"}. */
    public String operation() {
        return event.operation();
    }

    /** {@code "endpoint:/v1/charges CLOSED -> OPEN (opened)"}. */
    @Override
    public String toString() {
        return operation() + " " + from() + " -> " + to() + " (" + event.kind().wireName()
                + ")";
    }
}
