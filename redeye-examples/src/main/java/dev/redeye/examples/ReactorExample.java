package dev.redeye.examples;

import dev.redeye.CircuitBreaker;
import dev.redeye.Permit;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;

/**
 * A Reactor {@link Mono} guarded through the permission API: the permit is taken when the Mono is subscribed
 * (not when it is assembled), completed by the Mono's own signals, and released if the subscriber cancels.
 * A rejection is an error signal carrying {@code CircuitOpenException} (with its {@code retryAfter()}), so
 * {@code onErrorResume} can answer it.
 */
public final class ReactorExample {
    private ReactorExample() {
    }

    /**
     * {@code call} guarded by {@code breaker} for {@code operation}: each subscription asks for a permit, and
     * the Mono's success, error or cancellation completes it exactly once.
     */
    public static <T> Mono<T> guard(CircuitBreaker breaker, String operation, Mono<T> call) {
        return Mono.defer(() -> {
            Permit permit = breaker.tryAcquire(operation);
            if (!permit.isPermitted()) {
                return Mono.error(permit.rejection());
            }
            return call.doOnSuccess(value -> permit.onSuccess())
                    .doOnError(permit::onFailure)
                    .doOnCancel(permit::release);
        });
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
            Mono<String> guarded = guard(breaker, "pricing", flaky)
                    .onErrorResume(e -> Mono.just("fallback (" + e.getClass().getSimpleName() + ")"));
            for (int i = 1; i <= 6; i++) {
                out.println("subscription " + i + ": " + guarded.block());
            }
            out.println("calls that reached the pricing service: " + attempts.get());
            out.println("breaker: " + breaker.status("pricing") + ", " + breaker.metrics("pricing"));
        }
    }
}
