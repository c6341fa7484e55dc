package dev.redeye.spring.boot;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;

/**
 * Adjusts the builder of each breaker the auto-configuration builds, after the properties were applied and
 * before {@code build()}: the place for the options properties cannot carry (a fallback, a
 * {@code recordResult} predicate, listeners such as {@code onStateChange}, a clock). Declare it as a bean;
 * every customizer is called for every breaker, in {@link org.springframework.core.Ordered} order.
 *
 * <pre>{@code
 * @Bean
 * RedeyeBreakerCustomizer alerts(Alerts alerts) {
 *     return (name, builder) -> builder.onStateChange(e -> alerts.send(name, e));
 * }
 * }</pre>
 *
 * The store and {@code closeStore(false)} are set by the auto-configuration; a customizer that changes them
 * takes over the store's lifecycle.
 */
@FunctionalInterface
public interface RedeyeBreakerCustomizer {

    /**
     * Customizes one breaker's builder.
     *
     * @param name    the breaker's name ({@value RedeyeCircuitBreakers#DEFAULT} or a key of
     *                {@code redeye.breakers})
     * @param builder its builder, with the properties applied
     */
    void customize(String name, CircuitBreakerBuilder builder);
}
