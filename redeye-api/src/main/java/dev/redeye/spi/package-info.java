/**
 * The store SPI, for authors of a store: {@link dev.redeye.spi.Store} (get, put, delete, close) and its
 * capabilities, looked up with {@link dev.redeye.spi.Store#capability(Class)}: {@link dev.redeye.spi.AtomicUpdates}
 * (one atomic read-modify-write per change, applying {@link dev.redeye.spi.Transitions}),
 * {@link dev.redeye.spi.TrialClaims}, {@link dev.redeye.spi.TransitionFeed} and
 * {@link dev.redeye.spi.OperationListing}; a
 * {@link dev.redeye.spi.StoreProvider} makes a store from a URI and is found with {@link java.util.ServiceLoader}.
 * A new breaker strategy is a new {@link dev.redeye.spi.AtomicOperation}, never a new method here. Prove a
 * store with the TCK ({@code redeye-store-tck}); helpers for writing one are in {@code dev.redeye.spi.support}.
 */
package dev.redeye.spi;
