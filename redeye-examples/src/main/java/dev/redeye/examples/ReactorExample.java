package dev.redeye.examples;

import dev.redeye.CircuitBreaker;
import dev.redeye.reactor.RedeyeOperator;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A Reactor {@link Mono} and a {@link Flux} guarded by {@code redeye-reactor}'s {@link RedeyeOperator}
 * ({@code transformDeferred(RedeyeOperator.of(breaker, "pricing"))}): the permit is taken when the publisher is
 * subscribed (not when it is assembled), completed by its own signals, and released if the subscriber cancels
 * before any element. A rejection is an error signal carrying {@code CircuitOpenException} (with its
 * {@code retryAfter()}), so {@code onErrorResume} can answer it.
 */
public final class ReactorExample {
    private ReactorExample() {
    }

    /** Runs the example; prints one line per subscription to stdout. */
    public static void main(String[] args) {
        run(System.out);
    }

    static void run(PrintStream out) {
        AtomicInteger attempts = new AtomicInteger();
        Mono<String> flaky = Mono.fromCallable(() -> {
            if (attempts.incrementAndGet() > 2) {
                throw new IOException("pricing service down");
            }
            return "price 42";
        });
        try (CircuitBreaker breaker = CircuitBreaker.builder()
                .failureThreshold(2)
                .resetTimeout(Duration.ofMinutes(1))
                .build()) {
            Mono<String> guarded = flaky
                    .transformDeferred(RedeyeOperator.of(breaker, "pricing"))
                    .onErrorResume(e -> Mono.just("fallback (" + e.getClass().getSimpleName() + ")"));
            for (int i = 1; i <= 6; i++) {
                out.println("subscription " + i + ": " + guarded.block());
            }
            out.println("calls that reached the pricing service: " + attempts.get());
            out.println("breaker: " + breaker.status("pricing") + ", " + breaker.metrics("pricing"));

            // a Flux is one call per subscription: its completion is the success; take(1) cancels after an element,
            // which is a success too (the dependency answered)
            Flux<String> stock = Flux.just("apple", "pear", "plum").transformDeferred(RedeyeOperator.of(breaker, "stock"));
            out.println("stock: " + stock.collectList().block() + ", first: " + stock.take(1).blockFirst());
            // a subscriber that gives up before any element records nothing
            Mono.never().transformDeferred(RedeyeOperator.of(breaker, "stock")).subscribe().dispose();
            out.println("stock breaker: " + breaker.status("stock") + ", " + breaker.metrics("stock"));
        }
    }
}
