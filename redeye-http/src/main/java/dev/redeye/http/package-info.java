/**
 * Two-level circuit breakers for outbound HTTP on redeye's engine: {@link dev.redeye.http.HttpRuleSet} (service
 * and endpoint rules, from a builder or a plain map), {@link dev.redeye.http.HttpBreakers} (one breaker per rule,
 * admission on both levels, status classification, operate), {@link dev.redeye.http.RedeyeHttpClient} (a guarded
 * {@code java.net.http.HttpClient}). Client integrations for OkHttp and Spring live in their own packages and
 * need their client on the classpath.
 */
package dev.redeye.http;
