package dev.redeye.resilience4j.spring.app;

import io.github.resilience4j.circuitbreaker.annotation.CircuitBreaker;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

/**
 * Calls a dependency through Resilience4j's annotation, blocking and with a Reactor {@link Mono}; each fallback
 * answers with the simple name of the exception it was given. The dependency is in-process: the tests switch it
 * down and count its calls.
 */
@Service
public class BackendClient {
    private final AtomicInteger dependencyCalls = new AtomicInteger();
    private volatile boolean dependencyDown;

    /** The blocking call, guarded by the breaker {@code backend}. */
    @CircuitBreaker(name = "backend", fallbackMethod = "fallback")
    public String call() {
        return dependency();
    }

    /** The reactive call, guarded by the same breaker (Resilience4j's Reactor aspect extension). */
    @CircuitBreaker(name = "backend", fallbackMethod = "monoFallback")
    public Mono<String> callMono() {
        return Mono.fromCallable(this::dependency);
    }

    /** The blocking call's fallback. */
    public String fallback(Throwable t) {
        return "fallback " + t.getClass().getSimpleName();
    }

    /** The reactive call's fallback. */
    public Mono<String> monoFallback(Throwable t) {
        return Mono.just("fallback " + t.getClass().getSimpleName());
    }

    /** Whether the dependency fails from now on. */
    public void dependencyDown(boolean down) {
        dependencyDown = down;
    }

    /** How many times the dependency was called. */
    public int dependencyCalls() {
        return dependencyCalls.get();
    }

    private String dependency() {
        dependencyCalls.incrementAndGet();
        if (dependencyDown) {
            throw new IllegalStateException("dependency down");
        }
        return "ok";
    }
}
