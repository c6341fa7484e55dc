/**
 * Spring integration: {@link dev.redeye.http.spring.RedeyeClientHttpRequestInterceptor} for {@code RestClient}
 * and {@code RestTemplate}. Needs {@code org.springframework:spring-web} 6.x on the classpath (redeye-http
 * declares it optional, so only Spring users have it).
 */
package dev.redeye.http.spring;
