/**
 * Resilience4j's {@code io.github.resilience4j.circuitbreaker.CircuitBreaker} implemented over redeye, so that
 * code written for Resilience4j (its decorators, operators and integrations) gets a breaker whose state can live
 * in a shared store. {@link dev.redeye.resilience4j.Resilience4jBreakers} builds one per name from a
 * Resilience4j {@code CircuitBreakerConfig}; {@link dev.redeye.resilience4j.RedeyeBackedCircuitBreaker} is the
 * adapter. What maps to what, and what is refused, is in the module README.
 */
package dev.redeye.resilience4j;
