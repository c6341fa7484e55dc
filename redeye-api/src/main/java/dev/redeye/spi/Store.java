package dev.redeye.spi;

import dev.redeye.api.BreakerState;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.support.ForwardingStore;
import java.time.Duration;
import java.util.Optional;

/**
 * Where breaker state lives. The required methods are enough for a best-effort distributed breaker; the
 * optional capabilities ({@link AtomicUpdates}, {@link TrialClaims}, {@link TransitionFeed}) make it
 * exact, {@link OperationListing} lists what it holds for the operator's views; each is looked up with
 * {@link #capability(Class)}.
 *
 * <p>The {@code key} every method takes is the operation name exactly as the user wrote it. A store applies
 * its own prefix, escaping and hashing and must round-trip any string, however hostile. The circuit breaker
 * only passes names that {@link OperationNames#requireValid} accepts (non-empty, at most
 * {@value OperationNames#MAX_LENGTH} UTF-16 code units, well-formed, no U+0000), and a store must accept every
 * one of them: a valid name the store refuses would turn every call of that operation into a store error.
 *
 * <p>Implementations are thread-safe. Every backend failure is reported as {@link StoreException}, never as
 * the backend's own exception type. After {@link #close()} every method fails fast with
 * {@link StoreException}; closing twice is harmless.
 *
 * <p>Expiry is clean-up only. Atomic operations store the state they produce with
 * {@link Policy#stateTtl()} as its time-to-live, refreshed on every write, except a forced state, which
 * never expires (TCK rules R1.9 and R5.7); when it stops being forced the ttl applies again.
 *
 * <p>Versions of a key never go backwards, also across {@link #delete} and a backend expiry: an
 * atomic operation on an absent key starts from {@link BreakerState#initial(long)} with a base above every
 * version the key had before (the backend's clock in microseconds, or a remembered tombstone version), so
 * that a cache holding an older life's version is never stuck behind the new one. {@link #put} stores the
 * version it is given.
 *
 * <p>To decorate a store (counting, fault injection, a test double), extend {@link ForwardingStore}.
 *
 * <p>Prove an implementation with the TCK ({@code redeye-store-tck}).
 */
public interface Store extends AutoCloseable {

    /**
     * Reads the state of a key.
     *
     * @return the stored state, or empty if the key was never written (or deleted, or expired)
     * @throws StoreException if the backend fails or the data under the key is malformed
     */
    Optional<BreakerState> get(String key);

    /**
     * Writes the state of a key unconditionally (last writer wins).
     *
     * <p>A forced state ({@link BreakerState#forced()}) is stored without expiry, whatever {@code ttl} says:
     * while forced, every call is rejected and nothing refreshes a ttl, so an expiring key would silently
     * close a breaker that an operator holds open until reset (TCK rule R1.9).
     *
     * @param ttl clean-up time-to-live of the stored state; the breaker's timing never depends on it
     * @throws StoreException if the backend fails
     */
    void put(String key, BreakerState state, Duration ttl);

    /**
     * Removes the state of a key and every trial claim of it; a no-op for an unknown key.
     *
     * @throws StoreException if the backend fails
     */
    void delete(String key);

    /**
     * Looks up an optional capability. The default returns {@code this} when it implements the type; a
     * decorating store overrides this to forward exactly what it wraps.
     *
     * @param type one of the capability interfaces
     * @return the capability, or empty if this store does not offer it
     */
    default <C> Optional<C> capability(Class<C> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : Optional.empty();
    }

    /** Frees every connection and thread of this store instance; idempotent. */
    @Override
    void close();
}
