/**
 * Spring Cloud CircuitBreaker (spring-cloud-commons 4.3, the 2025.0 release train for Spring Boot 3.5) on
 * redeye: {@link dev.redeye.spring.cloud.RedeyeCircuitBreakerFactory} and
 * {@link dev.redeye.spring.cloud.ReactiveRedeyeCircuitBreakerFactory}, auto-configured over the breakers of
 * {@code redeye-spring-boot-starter} by {@link dev.redeye.spring.cloud.RedeyeSpringCloudAutoConfiguration}.
 */
package dev.redeye.spring.cloud;
