package dev.redeye.spring.cloud.app;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.circuitbreaker.CircuitBreakerFactory;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreakerFactory;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A Boot application written against Spring Cloud CircuitBreaker's API only ({@link CircuitBreakerFactory} and
 * {@link ReactiveCircuitBreakerFactory}), with redeye-spring-cloud and a store module on the class path and
 * {@code redeye.store} in its properties. {@link dev.redeye.spring.cloud.SpringCloudOverRedisTest} runs two.
 */
@SpringBootApplication
public class CatalogApplication {

    public static void main(String[] args) {
        SpringApplication.run(CatalogApplication.class, args);
    }

    /** The downstream dependency, which the test can take down. */
    @Component
    public static class Catalog {
        private final AtomicInteger calls = new AtomicInteger();
        private volatile boolean down;

        String item(String id) {
            calls.incrementAndGet();
            if (down) {
                throw new UncheckedIOException(new IOException("catalog unreachable"));
            }
            return "item " + id;
        }
    }

    @RestController
    public static class CatalogController {
        private final CircuitBreakerFactory<?, ?> breakers;
        private final ReactiveCircuitBreakerFactory<?, ?> reactive;
        private final Catalog catalog;

        public CatalogController(CircuitBreakerFactory<?, ?> breakers, ReactiveCircuitBreakerFactory<?, ?> reactive,
                Catalog catalog) {
            this.breakers = breakers;
            this.reactive = reactive;
            this.catalog = catalog;
        }

        /** The group names the redeye breaker (redeye.breakers.catalog.*). */
        @GetMapping("/item/{id}")
        public String item(@PathVariable("id") String id) {
            return breakers.create("catalog-items", "catalog").run(() -> catalog.item(id),
                    t -> "fallback (" + t.getClass().getSimpleName() + ")");
        }

        @GetMapping("/reactive/{id}")
        public Mono<String> reactiveItem(@PathVariable("id") String id) {
            return reactive.create("catalog-items", "catalog").run(Mono.fromCallable(() -> catalog.item(id)),
                    t -> Mono.just("reactive fallback (" + t.getClass().getSimpleName() + ")"));
        }

        @PostMapping("/test/catalog")
        public String down(@RequestParam("down") boolean down) {
            catalog.down = down;
            return "down=" + down;
        }

        @GetMapping("/test/catalog/calls")
        public int calls() {
            return catalog.calls.get();
        }
    }
}
