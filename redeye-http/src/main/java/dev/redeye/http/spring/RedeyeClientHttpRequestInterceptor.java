package dev.redeye.http.spring;

import dev.redeye.http.HttpBreakers;
import dev.redeye.http.HttpCircuitOpenException;
import dev.redeye.http.HttpPermit;
import java.io.IOException;
import java.util.Objects;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * A Spring {@link ClientHttpRequestInterceptor} guarding every request of a {@code RestClient} or
 * {@code RestTemplate} with {@link HttpBreakers}:
 *
 * <pre>{@code
 * RestClient client = RestClient.builder()
 *         .requestInterceptor(new RedeyeClientHttpRequestInterceptor(breakers))
 *         .build();
 * restTemplate.getInterceptors().add(new RedeyeClientHttpRequestInterceptor(breakers));
 * }</pre>
 *
 * A rejected request throws {@link HttpCircuitOpenException} (unchecked; Spring passes it through unchanged)
 * without reaching the network. A response is recorded by its status on both levels before Spring's error
 * handler sees it (so a 503 counts whether or not the client then throws {@code HttpServerErrorException}); an
 * {@link IOException} from the execution (connect error, timeout) is a failure. Only the request URI's path is
 * matched, never its query.
 *
 * <p>Needs {@code org.springframework:spring-web} 6.x (an optional dependency of redeye-http). Thread-safe.
 */
public final class RedeyeClientHttpRequestInterceptor implements ClientHttpRequestInterceptor {
    private final HttpBreakers breakers;

    /** @throws NullPointerException if {@code breakers} is null */
    public RedeyeClientHttpRequestInterceptor(HttpBreakers breakers) {
        this.breakers = Objects.requireNonNull(breakers, "breakers");
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        HttpPermit permit = breakers.acquire(request.getURI());
        ClientHttpResponse response;
        int status;
        try {
            response = execution.execute(request, body);
            status = response.getStatusCode().value();
        } catch (IOException | RuntimeException | Error e) {
            permit.onError(e);
            throw e;
        }
        permit.onStatus(status);
        return response;
    }

    @Override
    public String toString() {
        return "RedeyeClientHttpRequestInterceptor[" + breakers + "]";
    }
}
