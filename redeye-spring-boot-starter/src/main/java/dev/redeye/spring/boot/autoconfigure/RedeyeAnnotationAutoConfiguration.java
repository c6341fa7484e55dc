package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.spring.boot.CircuitBreakerGuarded;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;

/**
 * {@link CircuitBreakerGuarded} methods, with Spring AOP (on the class path with every Spring context). Off
 * with {@code redeye.annotation.enabled=false}.
 */
@AutoConfiguration(after = RedeyeAutoConfiguration.class)
@ConditionalOnClass(name = "org.aopalliance.intercept.MethodInterceptor")
@ConditionalOnProperty(prefix = "redeye", name = {"enabled", "annotation.enabled"}, havingValue = "true",
        matchIfMissing = true)
public class RedeyeAnnotationAutoConfiguration {

    /** Static: a post-processor must not make its configuration class initialize early. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static GuardedBeanPostProcessor redeyeGuardedBeanPostProcessor(ObjectProvider<RedeyeCircuitBreakers> breakers) {
        return new GuardedBeanPostProcessor(breakers);
    }
}
