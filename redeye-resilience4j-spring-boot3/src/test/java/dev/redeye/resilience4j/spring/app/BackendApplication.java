package dev.redeye.resilience4j.spring.app;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * An application written for Resilience4j only: {@code resilience4j-spring-boot3}, {@code spring-boot-starter-aop},
 * Actuator and web, Resilience4j's {@code @CircuitBreaker} on {@link BackendClient} and its configuration in
 * {@code application-backend.yml}. Nothing of redeye in its code: the tests add the dependency (it is on the
 * class path) and {@code redeye.store}.
 */
@SpringBootApplication
public class BackendApplication {
}
