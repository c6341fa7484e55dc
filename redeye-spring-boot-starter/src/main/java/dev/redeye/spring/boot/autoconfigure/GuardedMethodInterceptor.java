package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.CheckedSupplier;
import dev.redeye.CircuitBreaker;
import dev.redeye.spring.boot.CircuitBreakerGuarded;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Runs a {@link CircuitBreakerGuarded} method through its breaker: {@code execute} for a plain method,
 * {@code executeAsync} for one returning {@code CompletionStage}/{@code CompletableFuture}. What each method
 * needs is worked out once and cached. Thread-safe.
 */
final class GuardedMethodInterceptor implements MethodInterceptor {
    private static final String PUBLISHER = "org.reactivestreams.Publisher";

    /** What one annotated method needs. */
    record Guard(String breaker, String operation, boolean async) {
    }

    private final ObjectProvider<RedeyeCircuitBreakers> breakers;
    private final Map<Method, Guard> guards = new ConcurrentHashMap<>();
    /** Looked up at the first call (the registry may not exist yet when beans are proxied). */
    private volatile RedeyeCircuitBreakers registry;

    GuardedMethodInterceptor(ObjectProvider<RedeyeCircuitBreakers> breakers) {
        this.breakers = breakers;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Method method = target == null ? invocation.getMethod()
                : AopUtils.getMostSpecificMethod(invocation.getMethod(), AopUtils.getTargetClass(target));
        Guard g = guards.computeIfAbsent(method, GuardedMethodInterceptor::guardOf);
        RedeyeCircuitBreakers r = registry;
        if (r == null) {
            r = breakers.getObject();
            registry = r;
        }
        CircuitBreaker breaker = r.get(g.breaker());
        if (g.async()) {
            return breaker.executeAsync(g.operation(), () -> stage(invocation));
        }
        return breaker.execute(g.operation(), (CheckedSupplier<Object, Exception>) () -> proceed(invocation));
    }

    /**
     * The guard of an annotated method.
     *
     * @throws IllegalStateException if the method is not annotated, or returns a type the breaker cannot
     *                               guard (a Publisher, a Future that is not a CompletableFuture)
     */
    static Guard guardOf(Method method) {
        CircuitBreakerGuarded a = AnnotatedElementUtils.findMergedAnnotation(method, CircuitBreakerGuarded.class);
        if (a == null) {
            throw new IllegalStateException(method + " has no @CircuitBreakerGuarded");
        }
        if (a.value().isEmpty()) {
            throw new IllegalStateException("@CircuitBreakerGuarded on " + method + " names no operation");
        }
        Class<?> type = method.getReturnType();
        ClassLoader loader = method.getDeclaringClass().getClassLoader();
        if (ClassUtils.isPresent(PUBLISHER, loader)
                && ClassUtils.resolveClassName(PUBLISHER, loader).isAssignableFrom(type)) {
            throw new IllegalStateException("@CircuitBreakerGuarded cannot guard " + method + ": it returns a "
                    + "Reactive Streams Publisher, whose work starts at subscription; guard it with "
                    + "CircuitBreaker.tryAcquire (permits) instead");
        }
        boolean async = CompletionStage.class.isAssignableFrom(type);
        if (async && !type.isAssignableFrom(CompletableFuture.class)) {
            throw new IllegalStateException("@CircuitBreakerGuarded cannot guard " + method + ": it returns "
                    + type.getName() + "; declare CompletionStage or CompletableFuture");
        }
        if (!async && Future.class.isAssignableFrom(type)) {
            throw new IllegalStateException("@CircuitBreakerGuarded cannot guard " + method + ": a plain Future's "
                    + "outcome cannot be observed; return a CompletableFuture");
        }
        return new Guard(a.breaker(), a.value(), async);
    }

    private static Object proceed(MethodInvocation invocation) throws Exception {
        try {
            return invocation.proceed();
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t); // a Throwable neither Exception nor Error: never in practice
        }
    }

    @SuppressWarnings("unchecked")
    private static CompletionStage<Object> stage(MethodInvocation invocation) {
        try {
            CompletionStage<Object> s = (CompletionStage<Object>) invocation.proceed();
            return s != null ? s : CompletableFuture.failedFuture(new NullPointerException(
                    invocation.getMethod() + " returned null instead of a CompletionStage"));
        } catch (Throwable t) {
            return CompletableFuture.failedFuture(t); // thrown before the stage existed: the call's failure
        }
    }
}
