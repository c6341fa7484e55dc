package dev.redeye.spring.cloud;

import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import org.springframework.cloud.client.circuitbreaker.CircuitBreaker;
import org.springframework.cloud.client.circuitbreaker.CircuitBreakerFactory;

/**
 * Spring Cloud CircuitBreaker's {@link CircuitBreakerFactory} over the application's redeye breakers:
 *
 * <pre>{@code
 * String stock = factory.create("warehouse").run(() -> warehouse.stock(item), t -> "unknown");
 * }</pre>
 *
 * <ul>
 * <li>The id is the operation (the key of its shared state); the breaker is the one named by
 * {@code create(id, group)}'s group if the application has a breaker of that name ({@code redeye.breakers.<group>}),
 * else the default one. {@link #configure} and {@link #configureDefault} change that per id
 * ({@link RedeyeCircuitBreakerConfig}).</li>
 * <li>{@code run(toRun, fallback)} is {@code breaker.execute(operation, toRun)}: the fallback gets the rejection
 * ({@code CircuitOpenException}, {@code StoreUnavailableException}) or the call's own exception (a
 * {@link VirtualMachineError} is rethrown); {@code run(toRun)} throws Spring Cloud's
 * {@code NoFallbackAvailableException} around it, as every implementation does. The breaker's
 * {@code callTimeout} applies.</li>
 * </ul>
 *
 * Circuit breakers are cheap views (a breaker and an operation); creating one per call is fine. Thread-safe.
 */
public class RedeyeCircuitBreakerFactory
        extends CircuitBreakerFactory<RedeyeCircuitBreakerConfig, RedeyeCircuitBreakerConfig.Builder> {
    private final Configs configs;

    /** A factory over {@code breakers}. */
    public RedeyeCircuitBreakerFactory(RedeyeCircuitBreakers breakers) {
        this.configs = new Configs(breakers);
    }

    @Override
    protected RedeyeCircuitBreakerConfig.Builder configBuilder(String id) {
        return RedeyeCircuitBreakerConfig.builder(id);
    }

    @Override
    public void configureDefault(Function<String, RedeyeCircuitBreakerConfig> defaultConfiguration) {
        configs.configureDefault(defaultConfiguration);
    }

    /**
     * @throws java.util.NoSuchElementException if the id's configuration names a breaker the application lacks
     */
    @Override
    public CircuitBreaker create(String id) {
        return create(id, null);
    }

    /**
     * @throws java.util.NoSuchElementException if the id's configuration names a breaker the application lacks
     */
    @Override
    public CircuitBreaker create(String id, String groupName) {
        Configs.Resolved r = configs.resolve(getConfigurations(), id, groupName);
        return new Guarded(r.breaker(), r.operation());
    }

    /** One id's circuit breaker. */
    private static final class Guarded implements CircuitBreaker {
        private final dev.redeye.CircuitBreaker breaker;
        private final String operation;

        Guarded(dev.redeye.CircuitBreaker breaker, String operation) {
            this.breaker = breaker;
            this.operation = operation;
        }

        @Override
        public <T> T run(Supplier<T> toRun, Function<Throwable, T> fallback) {
            Objects.requireNonNull(toRun, "toRun");
            try {
                return breaker.execute(operation, toRun::get);
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable t) {
                return fallback.apply(t);
            }
        }

        @Override
        public String toString() {
            return "redeye circuit breaker for '" + operation + "' on " + breaker;
        }
    }
}
