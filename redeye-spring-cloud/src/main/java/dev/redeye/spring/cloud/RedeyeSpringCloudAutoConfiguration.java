package dev.redeye.spring.cloud;

import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import dev.redeye.spring.boot.autoconfigure.RedeyeAutoConfiguration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.cloud.client.circuitbreaker.CircuitBreakerFactory;
import org.springframework.cloud.client.circuitbreaker.Customizer;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreakerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Cloud CircuitBreaker over the starter's breakers: a {@link RedeyeCircuitBreakerFactory} bean, and a
 * {@link ReactiveRedeyeCircuitBreakerFactory} with Reactor on the class path, each unless the application has
 * its own factory of that kind. Every {@code Customizer<RedeyeCircuitBreakerFactory>} (or
 * {@code Customizer<ReactiveRedeyeCircuitBreakerFactory>}) bean is applied to it, as Spring Cloud's own
 * implementations do. Off with {@code spring.cloud.circuitbreaker.redeye.enabled=false}.
 */
@AutoConfiguration(after = RedeyeAutoConfiguration.class)
@ConditionalOnClass(CircuitBreakerFactory.class)
@ConditionalOnBean(RedeyeCircuitBreakers.class)
@ConditionalOnProperty(name = "spring.cloud.circuitbreaker.redeye.enabled", havingValue = "true", matchIfMissing = true)
public class RedeyeSpringCloudAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(CircuitBreakerFactory.class)
    RedeyeCircuitBreakerFactory redeyeCircuitBreakerFactory(RedeyeCircuitBreakers breakers,
            ObjectProvider<Customizer<RedeyeCircuitBreakerFactory>> customizers) {
        return customized(new RedeyeCircuitBreakerFactory(breakers), customizers);
    }

    /** {@code factory} after every customizer of its kind, in their order. */
    static <F> F customized(F factory, ObjectProvider<Customizer<F>> customizers) {
        customizers.orderedStream().forEach(c -> c.customize(factory));
        return factory;
    }

    /** The reactive factory, with Reactor (and redeye-reactor, which the starter brings) on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"reactor.core.publisher.Mono", "dev.redeye.reactor.RedeyeOperator"})
    static class Reactive {
        @Bean
        @ConditionalOnMissingBean(ReactiveCircuitBreakerFactory.class)
        ReactiveRedeyeCircuitBreakerFactory reactiveRedeyeCircuitBreakerFactory(RedeyeCircuitBreakers breakers,
                ObjectProvider<Customizer<ReactiveRedeyeCircuitBreakerFactory>> customizers) {
            return customized(new ReactiveRedeyeCircuitBreakerFactory(breakers), customizers);
        }
    }
}
