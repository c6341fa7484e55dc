/**
 * Helpers for store authors, none of which a store must use: {@link dev.redeye.spi.support.ForwardingStore}
 * (the base of every decorator), {@link dev.redeye.spi.support.StateCodec} (a state as text fields),
 * {@link dev.redeye.spi.support.FeedSubscribers} (fanning one feed out to many subscribers),
 * {@link dev.redeye.spi.support.StoreUris} (parsing and redacting store URIs),
 * {@link dev.redeye.spi.support.UriStoreProvider} (a provider that opens and describes its stores from a parsed
 * URI),
 * {@link dev.redeye.spi.support.Backoff} (the pause between the tries of a conditional write) and
 * {@link dev.redeye.spi.support.Arguments} (checks of a store's arguments).
 */
package dev.redeye.spi.support;
