package dev.redeye.resilience4j.spring;

import dev.redeye.Stores;
import dev.redeye.resilience4j.RedeyeCircuitBreakerRegistry;
import dev.redeye.resilience4j.Resilience4jBreakers;
import dev.redeye.spi.Store;
import dev.redeye.spring.boot.autoconfigure.RedeyeAutoConfiguration;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerEvent;
import io.github.resilience4j.common.CompositeCustomizer;
import io.github.resilience4j.common.circuitbreaker.configuration.CircuitBreakerConfigCustomizer;
import io.github.resilience4j.consumer.EventConsumerRegistry;
import io.github.resilience4j.core.registry.RegistryEventConsumer;
import io.github.resilience4j.spring6.circuitbreaker.configure.CircuitBreakerConfiguration;
import io.github.resilience4j.spring6.circuitbreaker.configure.CircuitBreakerConfigurationProperties;
import io.github.resilience4j.springboot3.circuitbreaker.autoconfigure.CircuitBreakerProperties;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * Supplies Resilience4j's {@link CircuitBreakerRegistry} bean as a {@link RedeyeCircuitBreakerRegistry} over the
 * redeye starter's {@link Store} bean, so that an application written for {@code resilience4j-spring-boot3}
 * ({@code @CircuitBreaker} methods, {@code resilience4j.circuitbreaker.*} properties, the Actuator endpoints, the
 * Micrometer meters) gets breakers whose state the whole fleet shares, with no code change.
 *
 * <p>Ordered before Resilience4j's {@code CircuitBreakerAutoConfiguration}, whose own registry bean is
 * {@code @ConditionalOnMissingBean} and so steps aside; everything else of Resilience4j's (the aspect and its
 * Reactor extension, the fallback executor, the event-consumer registry, the endpoints, the health indicator,
 * the metrics publisher) stays Resilience4j's and works over this registry. Active only when
 * {@code redeye.store} is set, the redeye starter has made its {@code Store} bean (so not with
 * {@code redeye.enabled=false}), both jars are on the class path, and the application has no
 * {@code CircuitBreakerRegistry} bean of its own; otherwise Resilience4j's registry is untouched.
 *
 * <p>The registry is built as Resilience4j builds its own: every {@code resilience4j.circuitbreaker.configs.*}
 * entry becomes a configuration ({@code default} the default one) through Resilience4j's
 * {@code createCircuitBreakerConfig} and the application's {@code CircuitBreakerConfigCustomizer} beans;
 * {@code resilience4j.circuitbreaker.tags} are the registry's tags; the {@code RegistryEventConsumer} beans
 * (Micrometer's tagged metrics publisher among them) get its entry events; the event-consumer registry is
 * attached with Resilience4j's own {@code registerEventConsumer}, so {@code /actuator/circuitbreakerevents} has
 * each breaker's events; and every instance under {@code resilience4j.circuitbreaker.instances.*} (and every
 * customizer's instance name) is built at start. An instance whose options redeye cannot honour fails the start
 * with a message naming the instance and the option.
 *
 * <p>The registry's breakers are closed before the store (the store bean is a dependency of the registry bean);
 * the store itself is the starter's, closed by Spring after them.
 */
@AutoConfiguration(after = RedeyeAutoConfiguration.class,
        beforeName = "io.github.resilience4j.springboot3.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration")
@ConditionalOnClass(name = {"io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry",
    "io.github.resilience4j.springboot3.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration",
    "dev.redeye.resilience4j.RedeyeCircuitBreakerRegistry"})
@Conditional(StoreUriCondition.class)
@EnableConfigurationProperties(CircuitBreakerProperties.class)
public class RedeyeResilience4jAutoConfiguration {
    /** The registry's bean name: the one Resilience4j gives its own. */
    public static final String REGISTRY = "circuitBreakerRegistry";

    private static final Logger LOG = LoggerFactory.getLogger(RedeyeResilience4jAutoConfiguration.class);

    /**
     * The fleet-wide registry.
     *
     * @param store                 the redeye starter's store bean (never closed here)
     * @param properties            Resilience4j's {@code resilience4j.circuitbreaker.*} properties
     * @param eventConsumerRegistry Resilience4j's registry of event buffers, read by
     *                              {@code /actuator/circuitbreakerevents}
     * @param registryEventConsumer Resilience4j's composite of the {@code RegistryEventConsumer} beans
     * @param customizer            Resilience4j's composite of the {@code CircuitBreakerConfigCustomizer} beans
     * @return the registry, its configured instances built
     * @throws IllegalStateException when a configured instance cannot be built over redeye, naming the property
     *                               and, in its cause's message, the option and why
     */
    @Bean(name = REGISTRY, destroyMethod = "close")
    @ConditionalOnMissingBean(CircuitBreakerRegistry.class)
    @ConditionalOnBean(Store.class)
    public RedeyeCircuitBreakerRegistry circuitBreakerRegistry(Store store,
            CircuitBreakerConfigurationProperties properties,
            EventConsumerRegistry<CircuitBreakerEvent> eventConsumerRegistry,
            RegistryEventConsumer<CircuitBreaker> registryEventConsumer,
            @Qualifier("compositeCircuitBreakerCustomizer")
            CompositeCustomizer<CircuitBreakerConfigCustomizer> customizer) {
        Map<String, CircuitBreakerConfig> configs = new LinkedHashMap<>();
        properties.getConfigs().forEach((name, instance) -> configs.put(name,
                properties.createCircuitBreakerConfig(name, instance, customizer)));
        RedeyeCircuitBreakerRegistry registry = RedeyeCircuitBreakerRegistry.builder(
                        Resilience4jBreakers.builder().store(store).closeStore(false).build())
                .withConfigurations(configs)
                .addRegistryEventConsumer(registryEventConsumer)
                .withTags(properties.getTags())
                .build();
        try {
            // before the first breaker, so that each one's events reach the endpoint's buffers
            new CircuitBreakerConfiguration(properties).registerEventConsumer(registry, eventConsumerRegistry);
            properties.getInstances().forEach((name, instance) -> create(registry, name,
                    properties.createCircuitBreakerConfig(name, instance, customizer)));
            // as Resilience4j does: a customizer names an instance that no configuration of that name covers
            for (String name : customizer.instanceNames()) {
                if (registry.getConfiguration(name).isEmpty()) {
                    create(registry, name, properties.createCircuitBreakerConfig(name, null, customizer));
                }
            }
        } catch (RuntimeException e) {
            registry.close();
            throw e;
        }
        LOG.info("redeye: Resilience4j circuit breakers {} share their state over {}",
                registry.getAllCircuitBreakers().stream().map(CircuitBreaker::getName).sorted().toList(),
                Stores.typeOf(store).getSimpleName());
        return registry;
    }

    private static void create(RedeyeCircuitBreakerRegistry registry, String name, CircuitBreakerConfig config) {
        try {
            registry.circuitBreaker(name, config);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("resilience4j.circuitbreaker.instances." + name
                    + " cannot be built over redeye's shared store: " + e.getMessage(), e);
        }
    }
}
