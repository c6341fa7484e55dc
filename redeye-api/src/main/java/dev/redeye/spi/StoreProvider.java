package dev.redeye.spi;

import dev.redeye.api.StoreException;
import dev.redeye.spi.support.StoreUris;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Maps URI schemes to a store, discovered with {@link java.util.ServiceLoader} through
 * {@code META-INF/services/dev.redeye.spi.StoreProvider}. {@code Stores.open(uri)} in the engine picks the
 * provider whose scheme prefixes the URI (the longest one wins, so {@code jdbc:postgresql} beats
 * {@code jdbc}).
 *
 * <p><b>Opening without the backend.</b> A provider of a network store also implements
 * {@link #describe(String)}: then {@code Stores.open(uri)} hands out a store that calls {@link #open} on
 * first use and again, with backoff, until it succeeds, so that a backend that is down when the application
 * starts does not fail the start (calls meanwhile get a {@link StoreException}, which the breaker handles under
 * its store error policy). A provider without it is always opened at once.
 */
public interface StoreProvider {

    /**
     * The schemes this provider opens, without the colon, lower case: for example {@code "redis"},
     * {@code "rediss"}, or {@code "jdbc:postgresql"}.
     */
    Set<String> schemes();

    /**
     * Opens a new store instance for the URI, connected: it reaches the backend before it returns. The caller
     * owns the returned store and closes it.
     *
     * @throws IllegalArgumentException if the URI is malformed for this provider (the message must not
     *                                  contain a password; see {@link StoreUris#redact(String)})
     * @throws StoreException           if the backend cannot be reached
     */
    Store open(String uri);

    /**
     * What every store {@link #open} returns for {@code uri} is, known without reaching the backend: its class
     * and the capability interfaces it offers ({@link AtomicUpdates}, {@link TrialClaims},
     * {@link TransitionFeed}). Checks the URI as {@code open} does, without
     * connecting. A circuit breaker looks a store's capabilities up once, when it is built, which may be before
     * the backend answers: a store opened later must then offer at least these (a store that offers fewer
     * fails to connect with a {@link StoreException} that says so).
     *
     * <p>The default returns empty: the provider cannot tell without connecting, and its stores are opened at
     * once.
     *
     * @return the description, or empty if it is only known once connected
     * @throws IllegalArgumentException if the URI is malformed for this provider, as {@link #open} would
     */
    default Optional<Description> describe(String uri) {
        return Optional.empty();
    }

    /**
     * What a provider's stores are, known before they connect ({@link #describe(String)}).
     *
     * @param type         the class of the stores {@link #open} returns: what metrics and log lines name them by
     * @param capabilities the capability interfaces those stores offer
     */
    record Description(Class<? extends Store> type, Set<Class<?>> capabilities) {
        /**
         * @throws NullPointerException if an argument is null
         */
        public Description {
            Objects.requireNonNull(type, "type");
            capabilities = Set.copyOf(Objects.requireNonNull(capabilities, "capabilities"));
        }

        /** A store of {@code type} offering every capability of the SPI. */
        public static Description allCapabilities(Class<? extends Store> type) {
            return new Description(type, Set.of(AtomicUpdates.class, TrialClaims.class, TransitionFeed.class));
        }
    }
}
