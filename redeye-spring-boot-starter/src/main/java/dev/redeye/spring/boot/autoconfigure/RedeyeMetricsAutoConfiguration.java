package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.micrometer.RedeyeMetrics;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import dev.redeye.spring.boot.RedeyeProperties;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Binds every breaker's meters ({@link RedeyeMetrics} from {@code redeye-micrometer}, tagged
 * {@code breaker=<name>}) when Micrometer is on the class path and the application has a
 * {@link MeterRegistry} bean. The binder is a {@link io.micrometer.core.instrument.binder.MeterBinder} bean:
 * Spring Boot's metrics auto-configuration binds it to its registry like its own JVM binders, and
 * an application without it gets its one registry bound once every bean exists. Off with
 * {@code redeye.metrics.enabled=false}.
 */
@AutoConfiguration(after = RedeyeAutoConfiguration.class, afterName = {
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnClass({MeterRegistry.class, RedeyeMetrics.class})
@ConditionalOnBean({MeterRegistry.class, RedeyeCircuitBreakers.class})
@ConditionalOnProperty(prefix = "redeye.metrics", name = "enabled", havingValue = "true", matchIfMissing = true)
public class RedeyeMetricsAutoConfiguration {

    @Bean(destroyMethod = "close")
    RedeyeMeterBinder redeyeMeterBinder(RedeyeCircuitBreakers breakers, RedeyeProperties properties) {
        return new RedeyeMeterBinder(breakers, properties.getMetrics().getCallTiming(),
                properties.getMetrics().getNaming());
    }

    /**
     * Without Spring Boot's metrics auto-configuration (no Actuator) nothing binds MeterBinder beans: bind to
     * the application's one registry (or its primary one) once every bean exists.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass("org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration")
    static class WithoutBootMetrics {
        private static final Logger LOG = LoggerFactory.getLogger(WithoutBootMetrics.class);

        @Bean
        SmartInitializingSingleton redeyeMeterBinding(RedeyeMeterBinder binder,
                ObjectProvider<MeterRegistry> registries) {
            return () -> {
                MeterRegistry registry = registries.getIfUnique();
                if (registry != null) {
                    binder.bindTo(registry);
                } else {
                    LOG.warn("redeye: several MeterRegistry beans and none primary; breakers' meters are not bound");
                }
            };
        }
    }
}
