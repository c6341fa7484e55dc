package dev.redeye.spring.boot.fleetapp;

import dev.redeye.api.CircuitOpenException;
import dev.redeye.spring.boot.CircuitBreakerGuarded;
import dev.redeye.spring.boot.TestDependency;
import java.io.IOException;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Component;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A Boot application written as a Resilience4j user would write it: {@code @CircuitBreakerGuarded} methods with
 * {@code fallbackMethod}s, one returning a {@code Mono}, on the {@code payments} breaker, whose health is
 * registered for a health group; the rest is properties. {@link dev.redeye.spring.boot.ResilienceFeaturesOverRedisTest}
 * runs two of them over one Redis.
 */
@SpringBootApplication
public class PricingApplication {

    public static void main(String[] args) {
        SpringApplication.run(PricingApplication.class, args);
    }

    /** The downstream dependency, which the test can take down. */
    @Component
    public static class Upstream extends TestDependency {
        public Upstream() {
            super("pricing upstream unreachable");
        }

        String price(String item) throws IOException {
            call();
            return "price " + item;
        }
    }

    @Service
    public static class Pricing {
        private final Upstream upstream;

        public Pricing(Upstream upstream) {
            this.upstream = upstream;
        }

        @CircuitBreakerGuarded(value = "pricing", breaker = "payments", fallbackMethod = "cached")
        public String price(String item) throws IOException {
            return upstream.price(item);
        }

        String cached(String item, CircuitOpenException rejected) {
            return "cached " + item;
        }

        String cached(String item, IOException failed) {
            return "unavailable " + item;
        }

        @CircuitBreakerGuarded(value = "quotes", breaker = "payments", fallbackMethod = "quoteRejected")
        public Mono<String> quote(String item) {
            return Mono.fromCallable(() -> upstream.price(item));
        }

        Mono<String> quoteRejected(String item, CircuitOpenException rejected) {
            return Mono.just("quote rejected");
        }
    }

    @RestController
    public static class PricingController {
        private final Pricing pricing;
        private final Upstream upstream;

        public PricingController(Pricing pricing, Upstream upstream) {
            this.pricing = pricing;
            this.upstream = upstream;
        }

        @GetMapping("/price/{item}")
        public String price(@PathVariable String item) throws IOException {
            return pricing.price(item);
        }

        @GetMapping("/quote/{item}")
        public Mono<String> quote(@PathVariable String item) {
            return pricing.quote(item);
        }

        /** Test control of this instance's dependency. */
        @PostMapping("/test/upstream")
        public String upstream(@RequestParam boolean down) {
            upstream.down(down);
            return "down=" + down;
        }

        @GetMapping("/test/upstream/calls")
        public int calls() {
            return upstream.calls();
        }
    }
}
