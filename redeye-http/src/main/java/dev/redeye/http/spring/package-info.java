/**
 * Spring integration: {@link dev.redeye.http.spring.RedeyeClientHttpRequestInterceptor} for {@code RestClient}
 * and {@code RestTemplate}, and {@link dev.redeye.http.spring.RedeyeExchangeFilterFunction} for WebFlux's
 * {@code WebClient} (which also needs {@code org.springframework:spring-webflux} 6.x). Needs
 * {@code org.springframework:spring-web} 6.x on the classpath (redeye-http
 * declares it optional, so only Spring users have it).
 */
package dev.redeye.http.spring;
