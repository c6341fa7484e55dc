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
 * Registers one {@link CircuitBreaker} bean per {@code redeye.breakers.<name>}, named
 * {@code redeyeCircuitBreaker.<name>} ({@link #beanName(String)}) and with the qualifier {@code name}, so
 * {@code @Qualifier("payments") CircuitBreaker payments} injects it. The prefix keeps a breaker's bean apart from
 * the application's own beans: a breaker named {@code payments} beside a {@code @Service class Payments} (bean
 * {@code payments}) is no clash. Each bean is a view of the breaker {@link RedeyeCircuitBreakers} built and owns
 * (no destroy method of its own). The names are read from the environment before any bean exists, which is why
 * this is a registrar and not a {@code @Bean} method.
 */
class NamedBreakersRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {
    /** What the bean name of a named breaker starts with: the default breaker's bean name and a dot. */
    static final String PREFIX = "redeyeCircuitBreaker.";

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
            registry.registerBeanDefinition(beanName(name), bd);
        }
    }

    /** The bean name of the breaker configured as {@code redeye.breakers.<name>}. */
    static String beanName(String name) {
        return PREFIX + name;
    }
}
