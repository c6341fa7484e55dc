package dev.redeye.http.okhttp;

import dev.redeye.api.CircuitOpenException;
import dev.redeye.http.HttpBreakers;
import dev.redeye.http.HttpPermit;
import java.io.IOException;
import java.util.Objects;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * An OkHttp {@link Interceptor} guarding every call with {@link HttpBreakers}. Install it as an application
 * interceptor, so it sees each call once, after redirects and retries:
 *
 * <pre>{@code
 * OkHttpClient client = new OkHttpClient.Builder()
 *         .addInterceptor(new RedeyeInterceptor(breakers))
 *         .build();
 * }</pre>
 *
 * A rejected call fails with {@link CircuitOpenIOException} (an {@link IOException}, as OkHttp expects of an
 * interceptor, so {@code Callback.onFailure} gets it for an async call) whose {@code rejection()} says which level
 * and rule rejected it and {@code retryAfter}; the call never reaches the network. A response is recorded by its
 * status ({@code Response.code()}) on both levels; an {@link IOException} from the chain is a failure, unless
 * the call was cancelled ({@code Call.cancel()}), which records nothing. The path matched is
 * {@code HttpUrl.encodedPath()}, never the query.
 *
 * <p>Needs {@code com.squareup.okhttp3:okhttp} (5.x; an optional dependency of redeye-http). Thread-safe.
 */
public final class RedeyeInterceptor implements Interceptor {
    private final HttpBreakers breakers;

    /** @throws NullPointerException if {@code breakers} is null */
    public RedeyeInterceptor(HttpBreakers breakers) {
        this.breakers = Objects.requireNonNull(breakers, "breakers");
    }

    @Override
    public Response intercept(Chain chain) throws IOException {
        Request request = chain.request();
        HttpPermit permit;
        try {
            permit = breakers.acquire(request.url().encodedPath());
        } catch (CircuitOpenException rejected) {
            throw new CircuitOpenIOException(rejected);
        }
        Response response;
        try {
            response = chain.proceed(request);
        } catch (IOException | RuntimeException | Error e) {
            if (chain.call().isCanceled()) {
                permit.release(); // the caller gave up: says nothing about the upstream
            } else {
                permit.onError(e);
            }
            throw e;
        }
        permit.onStatus(response.code());
        return response;
    }

    @Override
    public String toString() {
        return "RedeyeInterceptor[" + breakers + "]";
    }
}
