package dev.redeye.spring.cloud;

import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.util.Objects;
import org.springframework.cloud.client.circuitbreaker.ConfigBuilder;

/**
 * What a Spring Cloud circuit breaker id maps to: a redeye breaker of the application
 * ({@code redeye.breakers.<name>}, or {@value RedeyeCircuitBreakers#DEFAULT}) and the operation it guards, the
 * key its state has in the shared store. By default the id is the operation and the breaker is the one named
 * by the id's group (when there is a breaker of that name), else the default breaker. Immutable.
 *
 * <pre>{@code
 * @Bean
 * Customizer<RedeyeCircuitBreakerFactory> payments() {
 *     return factory -> factory.configure(b -> b.breaker("payments").operation("payment-gateway"), "charge", "refund");
 * }
 * }</pre>
 */
public final class RedeyeCircuitBreakerConfig {
    private final String id;
    private final String breaker;
    private final String operation;

    private RedeyeCircuitBreakerConfig(String id, String breaker, String operation) {
        this.id = id;
        this.breaker = breaker;
        this.operation = operation;
    }

    /** The Spring Cloud id it was built for. */
    public String id() {
        return id;
    }

    /** The redeye breaker's name, or null to follow the group (else the default breaker). */
    public String breaker() {
        return breaker;
    }

    /** The operation guarded. */
    public String operation() {
        return operation;
    }

    /** A builder for the circuit breaker {@code id}: operation {@code id}, breaker from the group. */
    public static Builder builder(String id) {
        return new Builder(id);
    }

    @Override
    public String toString() {
        return "RedeyeCircuitBreakerConfig[id=" + id + ", breaker=" + (breaker == null ? "(by group)" : breaker)
                + ", operation=" + operation + "]";
    }

    /** Builds a {@link RedeyeCircuitBreakerConfig}; each option is checked as it is set. */
    public static final class Builder implements ConfigBuilder<RedeyeCircuitBreakerConfig> {
        private final String id;
        private String breaker;
        private String operation;

        Builder(String id) {
            this.id = Objects.requireNonNull(id, "id");
            this.operation = id;
        }

        /**
         * The redeye breaker to use, by name; an unknown name fails when the circuit breaker is created.
         *
         * @throws IllegalArgumentException if {@code name} is empty
         */
        public Builder breaker(String name) {
            if (Objects.requireNonNull(name, "breaker").isEmpty()) {
                throw new IllegalArgumentException("breaker must not be empty");
            }
            this.breaker = name;
            return this;
        }

        /**
         * The operation to guard (default: the id).
         *
         * @throws IllegalArgumentException if {@code operation} is empty
         */
        public Builder operation(String operation) {
            if (Objects.requireNonNull(operation, "operation").isEmpty()) {
                throw new IllegalArgumentException("operation must not be empty");
            }
            this.operation = operation;
            return this;
        }

        @Override
        public RedeyeCircuitBreakerConfig build() {
            return new RedeyeCircuitBreakerConfig(id, breaker, operation);
        }
    }
}
