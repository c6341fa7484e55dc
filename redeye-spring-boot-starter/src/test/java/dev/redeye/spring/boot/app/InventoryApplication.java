package dev.redeye.spring.boot.app;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.spring.boot.TestDependency;
import java.io.IOException;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Boot application that uses a shared breaker with no redeye Java configuration at all: the starter on the
 * class path, {@code redeye.store=redis://...} in its properties, and a {@link CircuitBreaker} injected.
 * {@link dev.redeye.spring.boot.TwoInstancesOverRedisTest} runs two of them.
 */
@SpringBootApplication
public class InventoryApplication {

    public static void main(String[] args) {
        SpringApplication.run(InventoryApplication.class, args);
    }

    /** The downstream dependency, which the test can take down. */
    @Component
    public static class Warehouse extends TestDependency {
        public Warehouse() {
            super("warehouse unreachable");
        }

        String stock(String item) throws IOException {
            call();
            return item + ": 7 in stock";
        }
    }

    @RestController
    public static class InventoryController {
        private final CircuitBreaker breaker;
        private final Warehouse warehouse;

        public InventoryController(CircuitBreaker breaker, Warehouse warehouse) {
            this.breaker = breaker;
            this.warehouse = warehouse;
        }

        @GetMapping("/stock/{item}")
        public ResponseEntity<String> stock(@PathVariable String item) {
            try {
                return ResponseEntity.ok(breaker.execute("warehouse", () -> warehouse.stock(item)));
            } catch (CircuitOpenException e) {
                return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("breaker open");
            } catch (IOException e) {
                return ResponseEntity.status(HttpStatus.BAD_GATEWAY).body(e.getMessage());
            }
        }

        /** Test control of this instance's dependency. */
        @PostMapping("/test/warehouse")
        public String warehouse(@RequestParam boolean down) {
            warehouse.down(down);
            return "down=" + down;
        }

        @GetMapping("/test/warehouse/calls")
        public int calls() {
            return warehouse.calls();
        }
    }
}
