package dev.redeye.api;

import java.util.Set;

/**
 * Maps URI schemes to a store, discovered with {@link java.util.ServiceLoader} through
 * {@code META-INF/services/dev.redeye.api.StoreProvider}. {@code Stores.open(uri)} in the engine picks the
 * provider whose scheme prefixes the URI (the longest one wins, so {@code jdbc:postgresql} beats
 * {@code jdbc}).
 */
public interface StoreProvider {

    /**
     * The schemes this provider opens, without the colon, lower case: for example {@code "redis"},
     * {@code "rediss"}, or {@code "jdbc:postgresql"}.
     */
    Set<String> schemes();

    /**
     * Opens a new store instance for the URI. The caller owns the returned store and closes it.
     *
     * @throws IllegalArgumentException if the URI is malformed for this provider (the message must not
     *                                  contain a password; see {@link StoreUris#redact(String)})
     * @throws StoreException           if the backend cannot be reached
     */
    Store open(String uri);
}
