package dev.redeye.http;

import dev.redeye.Permit;
import java.util.Objects;
import java.util.Optional;

/**
 * Permission to send one request, granted by both levels' breakers ({@link HttpBreakers#acquire}); complete it
 * exactly once with the response's status ({@link #onStatus(int)}), the error that left the request without a
 * response ({@link #onError(Throwable)}), or {@link #release()} if it was never sent. The outcome is recorded on
 * both levels; the first completion wins and later ones do nothing, from any thread.
 *
 * <p>A request that matched no rule gets an unguarded permit whose completions do nothing. Thread-safe.
 */
public final class HttpPermit {
    static final HttpPermit UNGUARDED = new HttpPermit(null, null, null, null);

    private final RuleBreaker service;
    private final Permit servicePermit;
    private final RuleBreaker endpoint;
    private final Permit endpointPermit;

    HttpPermit(RuleBreaker service, Permit servicePermit, RuleBreaker endpoint, Permit endpointPermit) {
        this.service = service;
        this.servicePermit = servicePermit;
        this.endpoint = endpoint;
        this.endpointPermit = endpointPermit;
    }

    /** Whether any rule matched the request (else nothing is recorded for it). */
    public boolean isGuarded() {
        return servicePermit != null || endpointPermit != null;
    }

    /** The key of the service rule that guards the request, if any. */
    public Optional<String> serviceKey() {
        return service == null ? Optional.empty() : Optional.of(service.rule.key());
    }

    /** The key of the endpoint rule that guards the request, if any. */
    public Optional<String> endpointKey() {
        return endpoint == null ? Optional.empty() : Optional.of(endpoint.rule.key());
    }

    /** Whether either level admitted this request as a half-open trial. */
    public boolean isTrial() {
        return (servicePermit != null && servicePermit.isTrial()) || (endpointPermit != null && endpointPermit.isTrial());
    }

    /**
     * The request got a response with {@code status}: each level's breaker classifies it with its rule's
     * statuses (through the breaker's {@code recordResult} predicate) and records it.
     *
     * @return whether this completed the permit (false if already completed or unguarded)
     */
    public boolean onStatus(int status) {
        Integer s = status;
        boolean done = false;
        if (servicePermit != null) {
            done = servicePermit.onResult(s);
        }
        if (endpointPermit != null) {
            done |= endpointPermit.onResult(s);
        }
        return done;
    }

    /**
     * The request got no response (connect error, timeout, reset): a failure on both levels, unless it is an
     * interrupt or a cancellation, which the engine does not record (see {@code Permit#onFailure}).
     *
     * @return whether this completed the permit
     * @throws NullPointerException if {@code error} is null
     */
    public boolean onError(Throwable error) {
        Objects.requireNonNull(error, "error");
        boolean done = false;
        if (servicePermit != null) {
            done = servicePermit.onFailure(error);
        }
        if (endpointPermit != null) {
            done |= endpointPermit.onFailure(error);
        }
        return done;
    }

    /**
     * The request was not sent, or its end says nothing about the upstream (cancelled by the caller): records
     * nothing on either level and gives trial claims back.
     *
     * @return whether this completed the permit
     */
    public boolean release() {
        boolean done = false;
        if (servicePermit != null) {
            done = servicePermit.release();
        }
        if (endpointPermit != null) {
            done |= endpointPermit.release();
        }
        return done;
    }

    @Override
    public String toString() {
        if (!isGuarded()) {
            return "HttpPermit[unguarded]";
        }
        return "HttpPermit[" + (service != null ? service.operation : "-") + ", "
                + (endpoint != null ? endpoint.operation : "-") + (isTrial() ? ", trial" : "") + "]";
    }
}
