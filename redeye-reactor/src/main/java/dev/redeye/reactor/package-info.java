/**
 * Project Reactor support: {@link dev.redeye.reactor.RedeyeOperator}, which guards a {@code Mono} or a
 * {@code Flux} with a redeye {@link dev.redeye.CircuitBreaker} through its permission API
 * ({@code transformDeferred(RedeyeOperator.of(breaker, "op"))}). Needs {@code io.projectreactor:reactor-core}
 * 3.x (built and tested with 3.8.8).
 */
package dev.redeye.reactor;
