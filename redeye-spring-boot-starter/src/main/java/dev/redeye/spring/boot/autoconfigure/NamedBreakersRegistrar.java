package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.CircuitBreaker;
import dev.redeye.spring.boot.BreakerProperties;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.util.Map;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.support.AutowireCandidateQualifier;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Registers one {@link CircuitBreaker} bean per {@code redeye.breakers.<name>}, named after it and with the
 * qualifier {@code name}, so {@code @Qualifier("payments") CircuitBreaker payments} injects it. Each bean is a
 * view of the breaker {@link RedeyeCircuitBreakers} built and owns (no destroy method of its own). The names
 * are read from the environment before any bean exists, which is why this is a registrar and not a
 * {@code @Bean} method. A name clashing with another bean fails the start, as any bean-name clash does.
 */
class NamedBreakersRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {
    private Environment environment;

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        Map<String, BreakerProperties> breakers = Binder.get(environment)
                .bind("redeye.breakers", Bindable.mapOf(String.class, BreakerProperties.class))
                .orElse(Map.of());
        BeanFactory beans = (BeanFactory) registry;
        for (String name : RedeyeAutoConfiguration.configuredNames(breakers)) {
            RootBeanDefinition bd = new RootBeanDefinition(CircuitBreaker.class, () -> beans
                    .getBean(RedeyeAutoConfiguration.REGISTRY, RedeyeCircuitBreakers.class).get(name));
            bd.addQualifier(new AutowireCandidateQualifier(Qualifier.class, name));
            bd.setDependsOn(RedeyeAutoConfiguration.REGISTRY);
            bd.setDestroyMethodName(""); // the registry closes it
            registry.registerBeanDefinition(name, bd);
        }
    }
}
