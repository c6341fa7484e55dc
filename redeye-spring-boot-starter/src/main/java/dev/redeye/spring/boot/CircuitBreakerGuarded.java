package dev.redeye.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs every call of the annotated method through a breaker, as
 * {@code breaker.execute(operation, () -> method(...))} would:
 *
 * <pre>{@code
 * @Service
 * class PaymentClient {
 *     @CircuitBreakerGuarded("payment-gateway")                       // the default breaker
 *     public Receipt charge(Order order) throws IOException { ... }
 *
 *     @CircuitBreakerGuarded(value = "refunds", breaker = "payments")  // redeye.breakers.payments.*
 *     public CompletableFuture<Refund> refund(Order order) { ... }     // guarded as executeAsync
 * }
 * }</pre>
 *
 * <ul>
 * <li>The method's own exception is rethrown unchanged; a rejected call throws
 * {@link dev.redeye.api.CircuitOpenException} (or {@link dev.redeye.api.StoreUnavailableException}), unless
 * the breaker has a fallback (set one with a {@link RedeyeBreakerCustomizer}).</li>
 * <li>A method returning {@code CompletionStage} or {@code CompletableFuture} is guarded as
 * {@code executeAsync}: the outcome is the stage's. Methods returning a Reactive Streams
 * {@code Publisher} (Mono, Flux) or another {@code Future} are refused at start: guard them with
 * {@link dev.redeye.CircuitBreaker#tryAcquire(String) permits} (see {@code redeye-examples}' Reactor
 * example).</li>
 * <li>Spring AOP proxies apply: a call from the bean to its own method (self-invocation) is not guarded, nor
 * is a private or final method: annotate public methods. The annotation is read from the method (or a method
 * it overrides or implements), not from the class.</li>
 * <li>An unknown breaker name fails the start.</li>
 * </ul>
 *
 * Cost per call: the proxy's interceptor chain and two map lookups (the method's guard, its breaker), besides
 * the breaker's own.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface CircuitBreakerGuarded {

    /** The operation name: the key of the breaker's state, shared by every instance using the same name. */
    String value();

    /** The breaker: {@value RedeyeCircuitBreakers#DEFAULT} or a key of {@code redeye.breakers}. */
    String breaker() default RedeyeCircuitBreakers.DEFAULT;
}
