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
 *     @CircuitBreakerGuarded(value = "payment-gateway", fallbackMethod = "deferred")  // the default breaker
 *     public Receipt charge(Order order) throws IOException { ... }
 *
 *     Receipt deferred(Order order, CircuitOpenException rejected) { ... }   // rejections: the breaker is open
 *     Receipt deferred(Order order, IOException failed) { ... }              // the call's own IOExceptions
 *
 *     @CircuitBreakerGuarded(value = "refunds", breaker = "payments")          // redeye.breakers.payments.*
 *     public CompletableFuture<Refund> refund(Order order) { ... }             // guarded by the stage's outcome
 *
 *     @CircuitBreakerGuarded("ledger")
 *     public Flux<Entry> ledger(String account) { ... }                        // one permit per subscription
 * }
 * }</pre>
 *
 * <ul>
 * <li>The method's own exception is rethrown unchanged; a rejected call throws
 * {@link dev.redeye.api.CircuitOpenException} (or {@link dev.redeye.api.StoreUnavailableException}), unless
 * a fallback answers it (below, or the breaker's own, set with a {@link RedeyeBreakerCustomizer}, which answers
 * rejections before this one sees them).</li>
 * <li>{@code CompletionStage} / {@code CompletableFuture}: guarded as {@code executeAsync}, by the stage's
 * outcome; the caller's thread never waits.</li>
 * <li>Reactor's {@code Mono}, {@code Flux} (and a method declared to return {@code Publisher}, which gets a
 * {@code Flux}), with Reactor on the class path: guarded by {@code redeye-reactor}'s {@code RedeyeOperator},
 * without blocking: a permit per subscription, the outcome at the value, completion or error, a cancel before
 * any element records nothing. Other {@code Publisher} types and a plain {@code Future} are refused at start.</li>
 * <li>Spring AOP proxies apply: a call from the bean to its own method (self-invocation) is not guarded, nor
 * is a private or final method: annotate public methods. The annotation is read from the method (or a method
 * it overrides or implements), not from the class.</li>
 * <li>An unknown breaker name, or a {@link #fallbackMethod()} that does not resolve, fails the start.</li>
 * </ul>
 *
 * Cost per call: the proxy's interceptor chain and two map lookups (the method's guard, its breaker), besides
 * the breaker's own; a fallback costs a reflective call when it runs.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface CircuitBreakerGuarded {

    /** The operation name: the key of the breaker's state, shared by every instance using the same name. */
    String value();

    /** The breaker: {@value RedeyeCircuitBreakers#DEFAULT} or a key of {@code redeye.breakers}. */
    String breaker() default RedeyeCircuitBreakers.DEFAULT;

    /**
     * The name of the method that answers instead when the call is rejected or fails, as Resilience4j's
     * {@code @CircuitBreaker(fallbackMethod = ...)} does; none by default.
     *
     * <p>A fallback method is declared in the bean's class (or a superclass), with any visibility, with the
     * guarded method's parameters followed by one exception parameter, and returns what the guarded method
     * returns (a {@code Mono} for a {@code Mono}, a {@code CompletionStage} for a stage). There may be several
     * of that name for different exception types: for a given exception the one whose parameter is the
     * closest superclass of it runs (an {@code IOException} goes to {@code (Order, IOException)} rather than
     * {@code (Order, Exception)}). An exception no fallback's parameter accepts is rethrown (signalled) as it
     * was, and so is a {@link VirtualMachineError}.
     *
     * <p>It runs for rejections ({@code CircuitOpenException}, {@code StoreUnavailableException}) and for the
     * call's own exceptions, whether or not the breaker counted them as failures (those its
     * {@code recordFailure} predicate ignores included), on the target object (not through the proxy). What it
     * returns is the caller's result; what it throws is the caller's exception. For a stage, a {@code Mono} or
     * a {@code Flux} it runs when the outcome is known and its result replaces the failed one.
     */
    String fallbackMethod() default "";
}
