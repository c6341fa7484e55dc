package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.api.Store;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import dev.redeye.spring.boot.actuate.RedeyeEndpoint;
import dev.redeye.spring.boot.actuate.RedeyeEndpointWebExtension;
import dev.redeye.spring.boot.actuate.RedeyeHealthIndicator;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Actuator support, when {@code spring-boot-actuator} is on the class path: the {@code redeye} health
 * indicator ({@link RedeyeHealthIndicator}; off with {@code management.health.redeye.enabled=false}) and the
 * {@code redeye} endpoint ({@link RedeyeEndpoint}), created only when exposed
 * ({@code management.endpoints.web.exposure.include}) and enabled, as Actuator decides for every endpoint, with
 * its web extension ({@link RedeyeEndpointWebExtension}: errors with a reason) when exposed over HTTP.
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
}
