package dev.redeye.spring.cloud;

import dev.redeye.CircuitBreaker;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/** How both factories resolve an id (and group) to a redeye breaker and operation. Thread-safe. */
final class Configs {
    private final RedeyeCircuitBreakers breakers;
    private volatile Function<String, RedeyeCircuitBreakerConfig> defaults = id -> RedeyeCircuitBreakerConfig
            .builder(id).build();

    Configs(RedeyeCircuitBreakers breakers) {
        this.breakers = Objects.requireNonNull(breakers, "breakers");
    }

    void configureDefault(Function<String, RedeyeCircuitBreakerConfig> f) {
        defaults = Objects.requireNonNull(f, "defaultConfiguration");
    }

    /** The breaker and operation of {@code id}, its configuration created from the default if it has none. */
    Resolved resolve(Map<String, RedeyeCircuitBreakerConfig> configurations, String id, String group) {
        Objects.requireNonNull(id, "id");
        RedeyeCircuitBreakerConfig c = configurations.computeIfAbsent(id, i -> defaults.apply(i));
        String name = c.breaker() != null ? c.breaker()
                : group != null && breakers.find(group).isPresent() ? group : RedeyeCircuitBreakers.DEFAULT;
        return new Resolved(breakers.get(name), c.operation());
    }

    record Resolved(CircuitBreaker breaker, String operation) {
    }
}
