package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.CircuitBreaker;
import dev.redeye.reactor.RedeyeOperator;
import dev.redeye.spring.boot.autoconfigure.GuardedMethodInterceptor.Guard;
import dev.redeye.spring.boot.autoconfigure.GuardedMethodInterceptor.Kind;
import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code Mono} and {@code Flux} methods guarded with {@code redeye-reactor}'s {@link RedeyeOperator}: the method
 * runs when called, as it would unguarded (it only assembles the publisher), and each subscription to what it
 * returned asks the breaker; a fallback answers with {@code onErrorResume}. Only loaded when Reactor and
 * redeye-reactor are on the class path ({@link GuardedMethodInterceptor#REACTIVE}).
 */
final class ReactiveGuards {
    private ReactiveGuards() {
    }

    /** The kind for a declared return type: Mono, Flux or Publisher (which gets a Flux); null for others. */
    static Kind kindOf(Class<?> type) {
        if (type == Mono.class) {
            return Kind.MONO;
        }
        if (type == Flux.class || type == Publisher.class) {
            return Kind.FLUX;
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    static Object guard(CircuitBreaker breaker, Guard g, MethodInvocation invocation) {
        Object target = invocation.getThis();
        Object[] args = invocation.getArguments();
        Publisher<Object> source = source(invocation, g.kind());
        if (g.kind() == Kind.MONO) {
            Mono<Object> guarded = ((Mono<Object>) source).transformDeferred(RedeyeOperator.of(breaker, g.operation()));
            return g.fallback() == null ? guarded : guarded.onErrorResume(e -> Mono.defer(() -> {
                try {
                    Mono<Object> answer = (Mono<Object>) g.fallback().recover(target, args, e);
                    return answer != null ? answer : Mono.error(new NullPointerException(
                            g.fallback() + " returned null instead of a Mono"));
                } catch (Throwable thrown) {
                    return Mono.error(thrown); // no fallback for it, or the fallback threw
                }
            }));
        }
        Flux<Object> guarded = Flux.from(source).transformDeferred(RedeyeOperator.of(breaker, g.operation()));
        return g.fallback() == null ? guarded : guarded.onErrorResume(e -> Flux.defer(() -> {
            try {
                Publisher<Object> answer = (Publisher<Object>) g.fallback().recover(target, args, e);
                return answer != null ? answer : Flux.error(new NullPointerException(
                        g.fallback() + " returned null instead of a Publisher"));
            } catch (Throwable thrown) {
                return Flux.error(thrown);
            }
        }));
    }

    /** What the method returned; a method that threw (or returned null) instead is an error at subscription. */
    @SuppressWarnings("unchecked")
    private static Publisher<Object> source(MethodInvocation invocation, Kind kind) {
        Object p;
        try {
            p = invocation.proceed();
        } catch (Throwable t) {
            return kind == Kind.MONO ? Mono.error(t) : Flux.error(t);
        }
        if (p == null) {
            NullPointerException npe = new NullPointerException(invocation.getMethod() + " returned null");
            return kind == Kind.MONO ? Mono.error(npe) : Flux.error(npe);
        }
        return (Publisher<Object>) p;
    }
}
