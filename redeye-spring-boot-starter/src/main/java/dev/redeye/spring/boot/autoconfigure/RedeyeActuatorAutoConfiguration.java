package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.CircuitBreaker;
import dev.redeye.spi.Store;
import dev.redeye.spring.boot.BreakerProperties;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import dev.redeye.spring.boot.RedeyeProperties;
import dev.redeye.spring.boot.actuate.RedeyeBreakerHealthIndicator;
import dev.redeye.spring.boot.actuate.RedeyeEndpoint;
import dev.redeye.spring.boot.actuate.RedeyeEndpointWebExtension;
import dev.redeye.spring.boot.actuate.RedeyeEvents;
import dev.redeye.spring.boot.actuate.RedeyeEventsEndpoint;
import dev.redeye.spring.boot.actuate.RedeyeHealthIndicator;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.HealthContributor;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Actuator support, when {@code spring-boot-actuator} is on the class path: the {@code redeye} health
 * indicator ({@link RedeyeHealthIndicator}; off with {@code management.health.redeye.enabled=false}), the
 * {@code redeye} endpoint ({@link RedeyeEndpoint}) and the {@code redeyeevents} endpoint
 * ({@link RedeyeEventsEndpoint}), each created only when exposed ({@code management.endpoints.web.exposure.include})
 * and enabled, as Actuator decides for every endpoint (the {@code redeye} endpoint with its web extension,
 * {@link RedeyeEndpointWebExtension}: errors with a reason, when exposed over HTTP), and the opt-in health of each breaker
 * ({@link RedeyeBreakerHealthIndicator}, under {@code redeyeBreakers}; off with
 * {@code management.health.redeyebreakers.enabled=false}).
 */
@AutoConfiguration(after = RedeyeAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(RedeyeCircuitBreakers.class)
public class RedeyeActuatorAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnEnabledHealthIndicator("redeye")
    static class Health {
        @Bean
        @ConditionalOnMissingBean(name = "redeyeHealthIndicator")
        RedeyeHealthIndicator redeyeHealthIndicator(RedeyeCircuitBreakers breakers, ObjectProvider<Store> store) {
            return new RedeyeHealthIndicator(breakers, store.getIfAvailable());
        }
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnAvailableEndpoint(RedeyeEndpoint.class)
    RedeyeEndpoint redeyeEndpoint(RedeyeCircuitBreakers breakers) {
        return new RedeyeEndpoint(breakers);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RedeyeEndpoint.class)
    @ConditionalOnAvailableEndpoint(endpoint = RedeyeEndpoint.class, exposure = EndpointExposure.WEB)
    RedeyeEndpointWebExtension redeyeEndpointWebExtension(RedeyeEndpoint endpoint, RedeyeCircuitBreakers breakers) {
        return new RedeyeEndpointWebExtension(endpoint, breakers);
    }

    /** The opt-in health of each breaker that sets {@code register-health-indicator}, for health groups. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnEnabledHealthIndicator("redeyebreakers")
    @Conditional(BreakerHealthCondition.class)
    static class BreakerHealth {
        /** Named so that Actuator calls it {@code redeyeBreakers}, each breaker a child of it. */
        @Bean
        @ConditionalOnMissingBean(name = "redeyeBreakersHealthContributor")
        CompositeHealthContributor redeyeBreakersHealthContributor(RedeyeCircuitBreakers breakers,
                RedeyeProperties properties) {
            Map<String, HealthContributor> each = new LinkedHashMap<>();
            for (Map.Entry<String, CircuitBreaker> b : breakers.asMap().entrySet()) {
                BreakerProperties own = properties.getBreakers().get(b.getKey());
                if (BreakerHealthCondition.registered(own, properties.getDefaults())) {
                    each.put(b.getKey(), new RedeyeBreakerHealthIndicator(b.getValue(),
                            BreakerHealthCondition.allowedToFail(own, properties.getDefaults()),
                            BreakerHealthCondition.reportsOutlier(own, properties.getDefaults())));
                }
            }
            return CompositeHealthContributor.fromMap(each);
        }
    }

    /** The {@code redeyeevents} endpoint and its buffer, created only when the endpoint is exposed. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnAvailableEndpoint(RedeyeEventsEndpoint.class)
    static class Events {
        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        RedeyeEvents redeyeEvents(RedeyeCircuitBreakers breakers, RedeyeProperties properties) {
            return new RedeyeEvents(breakers, properties.getEvents().getBufferSize(), Clock.systemUTC());
        }

        @Bean
        @ConditionalOnMissingBean
        RedeyeEventsEndpoint redeyeEventsEndpoint(RedeyeEvents events) {
            return new RedeyeEventsEndpoint(events);
        }
    }
}
