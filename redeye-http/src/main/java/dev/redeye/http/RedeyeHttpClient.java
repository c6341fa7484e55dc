package dev.redeye.http;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * A {@link HttpClient} whose {@code send} and {@code sendAsync} are guarded by {@link HttpBreakers}: a drop-in
 * replacement for the client it wraps.
 *
 * <pre>{@code
 * HttpClient client = RedeyeHttpClient.wrap(HttpClient.newHttpClient(), breakers);
 * HttpResponse<String> r = client.send(request, BodyHandlers.ofString());   // HttpCircuitOpenException if open
 * }</pre>
 *
 * <ul>
 * <li>{@code send}: a rejected request throws {@link HttpCircuitOpenException} (unchecked) without reaching the
 * network; a response is recorded by its status on both levels; an {@link IOException} (connect error,
 * {@link java.net.http.HttpTimeoutException}) is a failure and is rethrown; an {@link InterruptedException} is
 * rethrown and not recorded.</li>
 * <li>{@code sendAsync}: a rejection completes the returned future exceptionally with
 * {@link HttpCircuitOpenException}. The returned future is the wrapped client's own, so cancelling it cancels
 * the exchange; a cancelled request is not recorded.</li>
 * </ul>
 * Only the request's path is matched (never its query). The status is recorded when the response's headers
 * arrive (as the body handler gets them), before the body is read. Every other method delegates. On Java 21+,
 * close (or shut down) the wrapped client itself: this class is compiled for Java 17 and does not forward those
 * methods. Thread-safe as the wrapped client.
 */
public final class RedeyeHttpClient extends HttpClient {
    private final HttpClient delegate;
    private final HttpBreakers breakers;

    private RedeyeHttpClient(HttpClient delegate, HttpBreakers breakers) {
        this.delegate = delegate;
        this.breakers = breakers;
    }

    /**
     * {@code client} guarded by {@code breakers}.
     *
     * @throws NullPointerException if an argument is null
     */
    public static HttpClient wrap(HttpClient client, HttpBreakers breakers) {
        return new RedeyeHttpClient(Objects.requireNonNull(client, "client"), Objects.requireNonNull(breakers, "breakers"));
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        HttpPermit permit = breakers.acquire(request.uri());
        HttpResponse<T> response;
        try {
            response = delegate.send(request, recording(handler, permit));
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            permit.onError(e);
            throw e;
        }
        permit.onStatus(response.statusCode()); // a no-op when the handler already recorded it
        return response;
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request,
            HttpResponse.BodyHandler<T> handler) {
        return sendAsync(request, handler, null);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
            HttpResponse.PushPromiseHandler<T> pushPromiseHandler) {
        HttpPermit permit;
        try {
            permit = breakers.acquire(request.uri());
        } catch (RuntimeException rejected) {
            return CompletableFuture.failedFuture(rejected);
        }
        CompletableFuture<HttpResponse<T>> f;
        try {
            f = delegate.sendAsync(request, recording(handler, permit), pushPromiseHandler);
        } catch (RuntimeException | Error e) {
            permit.onError(e);
            throw e;
        }
        f.whenComplete((r, t) -> {
            if (t == null) {
                permit.onStatus(r.statusCode());
            } else {
                permit.onError(t instanceof CompletionException && t.getCause() != null ? t.getCause() : t);
            }
        });
        return f;
    }

    /** Records the status as soon as the headers are in (a body that fails later does not make it a failure). */
    private static <T> HttpResponse.BodyHandler<T> recording(HttpResponse.BodyHandler<T> handler, HttpPermit permit) {
        Objects.requireNonNull(handler, "handler");
        if (!permit.isGuarded()) {
            return handler;
        }
        return info -> {
            permit.onStatus(info.statusCode());
            return handler.apply(info);
        };
    }

    @Override
    public Optional<CookieHandler> cookieHandler() {
        return delegate.cookieHandler();
    }

    @Override
    public Optional<Duration> connectTimeout() {
        return delegate.connectTimeout();
    }

    @Override
    public Redirect followRedirects() {
        return delegate.followRedirects();
    }

    @Override
    public Optional<ProxySelector> proxy() {
        return delegate.proxy();
    }

    @Override
    public SSLContext sslContext() {
        return delegate.sslContext();
    }

    @Override
    public SSLParameters sslParameters() {
        return delegate.sslParameters();
    }

    @Override
    public Optional<Authenticator> authenticator() {
        return delegate.authenticator();
    }

    @Override
    public Version version() {
        return delegate.version();
    }

    @Override
    public Optional<Executor> executor() {
        return delegate.executor();
    }

    @Override
    public String toString() {
        return "RedeyeHttpClient[" + delegate + ", " + breakers + "]";
    }
}
