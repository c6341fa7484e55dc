package dev.redeye.reactor;

import dev.redeye.CircuitBreaker;
import dev.redeye.Permit;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Guards a {@link Mono} or a {@link Flux} with a redeye {@link CircuitBreaker}, one permit per subscription:
 *
 * <pre>{@code
 * Mono<Price> price = pricing.get(item)
 *         .timeout(Duration.ofSeconds(2))                             // before the operator: a timeout is a failure
 *         .transformDeferred(RedeyeOperator.of(breaker, "pricing"))
 *         .onErrorResume(CircuitOpenException.class, e -> Mono.just(Price.unknown()));
 * Flux<Order> orders = ledger.stream(customer).transformDeferred(RedeyeOperator.of(breaker, "ledger"));
 * }</pre>
 *
 * <h2>What each signal does</h2>
 * <ul>
 * <li><b>Subscribe</b>: asks the breaker for a permit ({@link CircuitBreaker#tryAcquire(String)}). A rejection
 * is an error signal carrying the rejection ({@link dev.redeye.api.CircuitOpenException}, whose
 * {@code retryAfter()} says for how long, or {@link dev.redeye.api.StoreUnavailableException}), and the source
 * is never subscribed: nothing reaches the dependency. Each subscription (a {@code retry}, a second subscriber)
 * asks again.</li>
 * <li><b>Mono's value</b> (or its empty completion): the call's outcome, recorded when it arrives, before it
 * goes downstream. The value goes through the breaker's {@code recordResult} predicate, as a value
 * {@code execute} returns would ({@link Permit#onResult(Object)}); an empty completion is a success.</li>
 * <li><b>Flux's completion</b>: a success. Its elements are not given to {@code recordResult}.</li>
 * <li><b>Error</b>: a failure, under the breaker's {@code recordFailure} predicate and its interrupt and
 * cancellation rules ({@link Permit#onFailure(Throwable)}).</li>
 * <li><b>Cancel before any element</b>: records nothing and gives the permit back ({@link Permit#release()}),
 * a half-open trial's claim included: the caller gave up, which says nothing about the dependency.</li>
 * <li><b>Cancel after an element</b> (a {@code take(n)}, a {@code next()}, {@code zip} cancelling its other
 * source, a WebFlux controller that got its value): a success, as Resilience4j's {@code CircuitBreakerOperator}
 * records it: the dependency answered. A Mono's outcome is already recorded by then, so its cancel does
 * nothing.</li>
 * </ul>
 * The first outcome wins; later signals of the same subscription record nothing (a permit completes once).
 * Put {@code timeout(...)} <em>before</em> the operator so that its {@code TimeoutException} is seen as the
 * call's error; a timeout placed after it cancels the source, which records nothing. The breaker's
 * {@code callTimeout} and fallbacks do not apply (see {@link Permit}); answer rejections with
 * {@code onErrorResume}.
 *
 * <h2>Threads and cost</h2>
 * Admission runs on the subscribing thread and each outcome on the thread that signals it; neither blocks on
 * anything but the breaker's own store calls. In local mode and on the healthy path with the local cache
 * ({@code localCache()}), that is no store call at all; in distributed mode without it, admission reads the
 * store once and failures write to it, synchronously: on an event loop (Netty), enable the local cache or
 * subscribe on a scheduler that may block. Each subscription allocates its permit and the operators that
 * carry its signals. The operator itself is immutable, thread-safe and reusable.
 *
 * @param <T> the type of the elements
 */
public final class RedeyeOperator<T> implements UnaryOperator<Publisher<T>> {
    private final CircuitBreaker breaker;
    private final String operation;

    private RedeyeOperator(CircuitBreaker breaker, String operation) {
        this.breaker = breaker;
        this.operation = operation;
    }

    /**
     * The operator guarding publishers with {@code breaker} for {@code operation}, for
     * {@code transformDeferred} (or {@code transform}: admission happens at each subscription either way).
     *
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code operation} is empty
     */
    public static <T> RedeyeOperator<T> of(CircuitBreaker breaker, String operation) {
        Objects.requireNonNull(breaker, "breaker");
        if (Objects.requireNonNull(operation, "operation").isEmpty()) {
            throw new IllegalArgumentException("operation must not be empty");
        }
        return new RedeyeOperator<>(breaker, operation);
    }

    /** The breaker this operator asks. */
    public CircuitBreaker breaker() {
        return breaker;
    }

    /** The operation it guards. */
    public String operation() {
        return operation;
    }

    /**
     * {@code source} guarded: a {@link Mono} stays a Mono, any other publisher is guarded as a {@link Flux}.
     *
     * @throws NullPointerException if {@code source} is null
     */
    @Override
    public Publisher<T> apply(Publisher<T> source) {
        Objects.requireNonNull(source, "source");
        if (source instanceof Mono<T> mono) {
            return mono(mono);
        }
        return flux(Flux.from(source));
    }

    /** {@code source} guarded, as a Mono (see the class comment). */
    public Mono<T> mono(Mono<T> source) {
        Objects.requireNonNull(source, "source");
        return Mono.defer(() -> {
            Permit permit = breaker.tryAcquire(operation);
            if (!permit.isPermitted()) {
                return Mono.error(permit.rejection());
            }
            return source.doOnSuccess(value -> {
                if (value == null) {
                    permit.onSuccess(); // completed empty
                } else {
                    permit.onResult(value);
                }
            }).doOnError(permit::onFailure).doOnCancel(permit::release);
        });
    }

    /** {@code source} guarded, as a Flux (see the class comment). */
    public Flux<T> flux(Flux<T> source) {
        Objects.requireNonNull(source, "source");
        return Flux.defer(() -> {
            Permit permit = breaker.tryAcquire(operation);
            if (!permit.isPermitted()) {
                return Flux.error(permit.rejection());
            }
            FluxOutcome<T> outcome = new FluxOutcome<>(permit);
            return source.doOnNext(outcome).doOnComplete(permit::onSuccess).doOnError(permit::onFailure)
                    .doOnCancel(outcome::cancelled);
        });
    }

    /** One Flux subscription: whether an element arrived decides what a cancel means. */
    private static final class FluxOutcome<T> implements Consumer<T> {
        private final Permit permit;
        private volatile boolean emitted;

        FluxOutcome(Permit permit) {
            this.permit = permit;
        }

        @Override
        public void accept(T element) {
            if (!emitted) {
                emitted = true;
            }
        }

        void cancelled() {
            if (emitted) {
                permit.onSuccess(); // the dependency answered; the subscriber had enough
            } else {
                permit.release();
            }
        }
    }

    @Override
    public String toString() {
        return "RedeyeOperator[" + operation + "]";
    }
}
