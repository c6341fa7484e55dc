/**
 * Small runnable programs, one per integration, each a {@code main} that {@code ExamplesTest} runs and checks:
 * {@link dev.redeye.examples.PrometheusExample} (Micrometer meters scraped as Prometheus text),
 * {@link dev.redeye.examples.ReactorExample} (a Reactor {@code Mono} and {@code Flux} guarded by
 * {@code redeye-reactor}'s operator), {@code KotlinExample} (Kotlin coroutines with {@code redeye-kotlin}, in
 * {@code src/main/kotlin}) and {@link dev.redeye.examples.InterceptorExample} (the shape of a gRPC client
 * interceptor, without gRPC). This module is never published.
 */
package dev.redeye.examples;
