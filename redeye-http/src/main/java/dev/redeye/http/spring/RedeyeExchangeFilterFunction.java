package dev.redeye.http.spring;

import dev.redeye.http.HttpBreakers;
import dev.redeye.http.HttpCircuitOpenException;
import dev.redeye.http.HttpPermit;
import java.util.Objects;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;

/**
 * A Spring WebFlux {@link ExchangeFilterFunction} guarding every request of a {@code WebClient} with
 * {@link HttpBreakers}, by the same rules, levels and classification as the other redeye-http clients:
 *
 * <pre>{@code
 * WebClient client = WebClient.builder()
 *         .filter(new RedeyeExchangeFilterFunction(breakers))
 *         .build();
 * }</pre>
 *
 * <ul>
 * <li>The permit is asked for when the exchange is subscribed (each retry asks again), never at assembly. A
 * rejection is an error signal carrying {@link HttpCircuitOpenException} (level, key, {@code retryAfter}); the
 * request is never sent.</li>
 * <li>The response's status is recorded on both levels when the response arrives, before {@code retrieve()} or
 * {@code exchangeToMono} sees it (so a 503 counts whether or not the client then signals
 * {@code WebClientResponseException}); the body is the caller's.</li>
 * <li>An error before any response (connect error, reset, a connector's read timeout: a
 * {@code WebClientRequestException}) is a failure. A cancellation before the response records nothing and gives
 * a half-open trial claim back, and a {@code timeout(...)} on the request's Mono is one: a caller's timeout says
 * nothing about the upstream. To count a slow upstream as a failure, set the connector's response timeout
 * (Reactor Netty's {@code HttpClient.responseTimeout}, {@code JdkClientHttpConnector.setReadTimeout}).</li>
 * </ul>
 * Only the request URI's path is matched, never its query. Admission runs on the subscribing thread and may read
 * the store (see {@link HttpBreakers}); with a network store on an event loop, customize the breakers with the
 * local cache. Needs {@code org.springframework:spring-webflux} 6.x (an optional dependency of redeye-http) and
 * so Reactor. Thread-safe.
 */
public final class RedeyeExchangeFilterFunction implements ExchangeFilterFunction {
    private final HttpBreakers breakers;

    /** @throws NullPointerException if {@code breakers} is null */
    public RedeyeExchangeFilterFunction(HttpBreakers breakers) {
        this.breakers = Objects.requireNonNull(breakers, "breakers");
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        return Mono.defer(() -> {
            HttpPermit permit = breakers.acquire(request.url()); // a rejection thrown here is the Mono's error
            return next.exchange(request)
                    .doOnSuccess(response -> {
                        if (response != null) {
                            permit.onStatus(response.statusCode().value());
                        } else {
                            permit.release(); // completed without a response: nothing to classify
                        }
                    })
                    .doOnError(permit::onError)
                    .doOnCancel(permit::release);
        });
    }

    @Override
    public String toString() {
        return "RedeyeExchangeFilterFunction[" + breakers + "]";
    }
}
