package dev.redeye;

/**
 * How {@link Stores#open(String, OpenMode)} opens a store from a URI.
 */
public enum OpenMode {
    /**
     * The default: a store that connects on first use and keeps trying until it does, so that a store that
     * cannot be reached when the application starts never fails the start. Applies to the network stores
     * (their providers declare their capabilities without connecting, see
     * {@link dev.redeye.spi.StoreProvider#describe(String)}); any other store is opened at once.
     *
     * <p>{@code Stores.open} then checks the URI and returns at once, without connecting. The first use of the
     * store (any call; a feed subscription; not a capability lookup) starts connecting and waits for that
     * first attempt, at most 10 s. While the backend cannot be reached, every store call fails at once with
     * a {@link dev.redeye.api.StoreException} naming the last failure: a circuit breaker handles it under its
     * {@link StoreErrorPolicy} and reports it to {@code onStoreError}, as any store error. One background
     * thread, which ends when the store connects or is closed, retries meanwhile with backoff (100 ms
     * doubling to 5 s, with jitter); a feed subscription made meanwhile starts when the store connects, and
     * its subscriber is told of a gap then. Once connected, the store's own client reconnects after an
     * outage, as with {@link #STRICT}. The store returned is not the provider's own type (use {@link #STRICT}
     * or the store class's own {@code open} for that; {@link Stores#typeOf} names it, and
     * {@code capability(TheType.class)} reaches it once connected).
     */
    LAZY,

    /**
     * Connects before returning: {@code Stores.open} fails with a {@link dev.redeye.api.StoreException} if
     * the backend cannot be reached, for an application that must not start without its store. Returns the
     * provider's own store type.
     */
    STRICT
}
