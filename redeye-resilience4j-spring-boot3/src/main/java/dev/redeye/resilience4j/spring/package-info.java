/**
 * Spring Boot 3.5 auto-configuration for applications written for {@code resilience4j-spring-boot3}: with
 * {@code redeye.store} set, {@link dev.redeye.resilience4j.spring.RedeyeResilience4jAutoConfiguration} supplies
 * the {@code CircuitBreakerRegistry} bean, built from Resilience4j's own {@code resilience4j.circuitbreaker.*}
 * properties and customizers, whose breakers share their state through the redeye starter's store bean. See the
 * module README.
 */
package dev.redeye.resilience4j.spring;
