package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.spring.boot.CircuitBreakerGuarded;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Proxies beans with {@link CircuitBreakerGuarded} methods, the way Spring's own {@code @Async} and
 * {@code @Validated} post-processors do (Spring AOP only, no AspectJ): one advisor, outermost on a bean that
 * is already proxied (so a breaker sees the failures of a {@code @Transactional} commit). Once every singleton
 * exists it checks each annotated method it proxied (its breaker exists, its return type can be guarded, its
 * fallbackMethod resolves), so a mistake fails the start rather than the first call.
 */
final class GuardedBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton {
    private final ObjectProvider<RedeyeCircuitBreakers> breakers;
    /** The annotated methods of the beans proxied so far, with the bean's class, checked once all exist. */
    private final List<Map.Entry<Method, Class<?>>> proxied = new ArrayList<>();

    GuardedBeanPostProcessor(ObjectProvider<RedeyeCircuitBreakers> breakers) {
        this.breakers = breakers;
        this.advisor = new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, CircuitBreakerGuarded.class,
                true), new GuardedMethodInterceptor(breakers));
        setBeforeExistingAdvisors(true);
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (isEligible(bean, beanName)) {
            Class<?> targetClass = AopUtils.getTargetClass(bean);
            synchronized (proxied) {
                ReflectionUtils.doWithMethods(targetClass, m -> proxied.add(Map.entry(m, targetClass)),
                        m -> AnnotatedElementUtils.hasAnnotation(m, CircuitBreakerGuarded.class));
            }
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }

    @Override
    public void afterSingletonsInstantiated() {
        RedeyeCircuitBreakers registry = breakers.getObject();
        synchronized (proxied) {
            for (Map.Entry<Method, Class<?>> annotated : proxied) {
                Method m = annotated.getKey();
                GuardedMethodInterceptor.Guard g = GuardedMethodInterceptor.guardOf(m, annotated.getValue());
                try {
                    registry.get(g.breaker());
                } catch (NoSuchElementException e) {
                    throw new IllegalStateException("@CircuitBreakerGuarded on " + m + ": " + e.getMessage(), e);
                }
            }
            proxied.clear();
        }
    }
}
