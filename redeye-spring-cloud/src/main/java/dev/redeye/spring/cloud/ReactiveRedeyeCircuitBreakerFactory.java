package dev.redeye.spring.cloud;

import dev.redeye.CircuitBreaker;
import dev.redeye.reactor.RedeyeOperator;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.util.function.Function;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreaker;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreakerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Spring Cloud CircuitBreaker's {@link ReactiveCircuitBreakerFactory} over the application's redeye breakers,
 * with {@code redeye-reactor}'s {@link RedeyeOperator}:
 *
 * <pre>{@code
 * Mono<String> stock = factory.create("warehouse").run(webClient.get().uri(...).retrieve().bodyToMono(String.class),
 *         t -> Mono.just("unknown"));
 * }</pre>
 *
 * Ids, groups and configuration as for {@link RedeyeCircuitBreakerFactory}. {@code run(mono, fallback)} guards each
 * subscription: a permit at subscribe (a rejection is an error signal, the source never subscribed), the outcome
 * at the value, completion or error, a cancel before any element recording nothing; the fallback answers errors
 * with {@code onErrorResume}. Nothing blocks but the breaker's own store calls (see {@link RedeyeOperator}).
 * Thread-safe.
 */
public class ReactiveRedeyeCircuitBreakerFactory
        extends ReactiveCircuitBreakerFactory<RedeyeCircuitBreakerConfig, RedeyeCircuitBreakerConfig.Builder> {
    private final Configs configs;

    /** A factory over {@code breakers}. */
    public ReactiveRedeyeCircuitBreakerFactory(RedeyeCircuitBreakers breakers) {
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
    public ReactiveCircuitBreaker create(String id) {
        return create(id, null);
    }

    /**
     * @throws java.util.NoSuchElementException if the id's configuration names a breaker the application lacks
     */
    @Override
    public ReactiveCircuitBreaker create(String id, String groupName) {
        Configs.Resolved r = configs.resolve(getConfigurations(), id, groupName);
        return new Guarded(r.breaker(), r.operation());
    }

    /** One id's reactive circuit breaker. */
    private static final class Guarded implements ReactiveCircuitBreaker {
        private final CircuitBreaker breaker;
        private final String operation;

        Guarded(CircuitBreaker breaker, String operation) {
            this.breaker = breaker;
            this.operation = operation;
        }

        @Override
        public <T> Mono<T> run(Mono<T> toRun, Function<Throwable, Mono<T>> fallback) {
            Mono<T> guarded = toRun.transformDeferred(RedeyeOperator.of(breaker, operation));
            return fallback == null ? guarded : guarded.onErrorResume(fallback);
        }

        @Override
        public <T> Flux<T> run(Flux<T> toRun, Function<Throwable, Flux<T>> fallback) {
            Flux<T> guarded = toRun.transformDeferred(RedeyeOperator.of(breaker, operation));
            return fallback == null ? guarded : guarded.onErrorResume(fallback);
        }

        @Override
        public String toString() {
            return "redeye reactive circuit breaker for '" + operation + "' on " + breaker;
        }
    }
}
