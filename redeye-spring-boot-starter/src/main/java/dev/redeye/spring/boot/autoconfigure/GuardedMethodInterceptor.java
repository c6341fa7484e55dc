package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.CheckedSupplier;
import dev.redeye.CircuitBreaker;
import dev.redeye.spring.boot.CircuitBreakerGuarded;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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
 * {@code executeAsync} for one returning {@code CompletionStage}/{@code CompletableFuture}, {@code redeye-reactor}'s
 * operator for a {@code Mono} or {@code Flux} ({@link ReactiveGuards}, loaded only with Reactor on the class
 * path); then the {@code fallbackMethod}, if any, for what was rejected or failed. What each method needs is
 * worked out once and cached. Thread-safe.
 */
final class GuardedMethodInterceptor implements MethodInterceptor {
    private static final String PUBLISHER = "org.reactivestreams.Publisher";
    /** Reactor and redeye-reactor: both are needed to guard a Mono or a Flux. */
    static final boolean REACTIVE = ClassUtils.isPresent("reactor.core.publisher.Mono",
            GuardedMethodInterceptor.class.getClassLoader())
            && ClassUtils.isPresent("dev.redeye.reactor.RedeyeOperator", GuardedMethodInterceptor.class.getClassLoader());

    /** How a guarded method's result is observed. */
    enum Kind {
        /** The call returns or throws: {@code execute}. */
        SYNC,
        /** A {@code CompletionStage}: {@code executeAsync}. */
        STAGE,
        /** A Reactor {@code Mono}. */
        MONO,
        /** A Reactor {@code Flux} (or a declared {@code Publisher}). */
        FLUX
    }

    /** What one annotated method needs; {@code fallback} is null without a {@code fallbackMethod}. */
    record Guard(String breaker, String operation, Kind kind, FallbackMethod fallback) {
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
        Class<?> targetClass = target == null ? invocation.getMethod().getDeclaringClass()
                : AopUtils.getTargetClass(target);
        Method method = target == null ? invocation.getMethod()
                : AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass);
        Guard g = guards.computeIfAbsent(method, m -> guardOf(m, targetClass));
        RedeyeCircuitBreakers r = registry;
        if (r == null) {
            r = breakers.getObject();
            registry = r;
        }
        CircuitBreaker breaker = r.get(g.breaker());
        switch (g.kind()) {
            case STAGE:
                return stage(breaker, g, invocation);
            case MONO:
            case FLUX:
                return ReactiveGuards.guard(breaker, g, invocation);
            default:
                try {
                    return breaker.execute(g.operation(), (CheckedSupplier<Object, Exception>) () -> proceed(invocation));
                } catch (Throwable t) {
                    if (g.fallback() == null) {
                        throw t;
                    }
                    return g.fallback().recover(target, invocation.getArguments(), t);
                }
        }
    }

    /**
     * The guard of an annotated method of {@code targetClass}.
     *
     * @throws IllegalStateException if the method is not annotated, returns a type the breaker cannot guard (a
     *                               Publisher other than Mono and Flux, a Future that is not a
     *                               CompletableFuture), or names a fallbackMethod that does not resolve
     */
    static Guard guardOf(Method method, Class<?> targetClass) {
        CircuitBreakerGuarded a = AnnotatedElementUtils.findMergedAnnotation(method, CircuitBreakerGuarded.class);
        if (a == null) {
            throw new IllegalStateException(method + " has no @CircuitBreakerGuarded");
        }
        if (a.value().isEmpty()) {
            throw new IllegalStateException("@CircuitBreakerGuarded on " + method + " names no operation");
        }
        Kind kind = kindOf(method);
        FallbackMethod fallback = a.fallbackMethod().isEmpty() ? null
                : FallbackMethod.resolve(method, targetClass, a.fallbackMethod());
        return new Guard(a.breaker(), a.value(), kind, fallback);
    }

    private static Kind kindOf(Method method) {
        Class<?> type = method.getReturnType();
        ClassLoader loader = method.getDeclaringClass().getClassLoader();
        if (ClassUtils.isPresent(PUBLISHER, loader)
                && ClassUtils.resolveClassName(PUBLISHER, loader).isAssignableFrom(type)) {
            Kind reactive = REACTIVE ? ReactiveGuards.kindOf(type) : null;
            if (reactive == null) {
                throw new IllegalStateException("@CircuitBreakerGuarded cannot guard " + method + ": it returns "
                        + type.getName() + "; a Reactive Streams Publisher is guarded when it is declared as "
                        + "Reactor's Mono or Flux (or Publisher), with reactor-core and dev.redeye:redeye-reactor on "
                        + "the class path" + (REACTIVE ? "" : " (missing now)")
                        + "; else guard it with CircuitBreaker.tryAcquire (permits)");
            }
            return reactive;
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
        return async ? Kind.STAGE : Kind.SYNC;
    }

    static Object proceed(MethodInvocation invocation) throws Exception {
        try {
            return invocation.proceed();
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t); // a Throwable neither Exception nor Error: never in practice
        }
    }

    private static CompletableFuture<Object> stage(CircuitBreaker breaker, Guard g, MethodInvocation invocation) {
        CompletableFuture<Object> f = breaker.executeAsync(g.operation(), () -> stageOf(invocation));
        if (g.fallback() == null) {
            return f;
        }
        Object target = invocation.getThis();
        Object[] args = invocation.getArguments();
        return f.exceptionallyCompose(t -> {
            Throwable error = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
            try {
                @SuppressWarnings("unchecked")
                CompletionStage<Object> answer = (CompletionStage<Object>) g.fallback().recover(target, args, error);
                return answer != null ? answer : CompletableFuture.failedFuture(new NullPointerException(
                        g.fallback() + " returned null instead of a CompletionStage"));
            } catch (Throwable thrown) {
                return CompletableFuture.failedFuture(thrown); // no fallback for it, or the fallback threw
            }
        });
    }

    @SuppressWarnings("unchecked")
    private static CompletionStage<Object> stageOf(MethodInvocation invocation) {
        try {
            CompletionStage<Object> s = (CompletionStage<Object>) invocation.proceed();
            return s != null ? s : CompletableFuture.failedFuture(new NullPointerException(
                    invocation.getMethod() + " returned null instead of a CompletionStage"));
        } catch (Throwable t) {
            return CompletableFuture.failedFuture(t); // thrown before the stage existed: the call's failure
        }
    }
}
