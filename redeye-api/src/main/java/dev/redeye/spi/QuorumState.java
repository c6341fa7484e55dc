package dev.redeye.spi;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;

/**
 * Capability: the store keeps {@link BreakerState#contributors()} through every write (its layout holds them,
 * as {@link dev.redeye.spi.support.StateCodec}'s {@code contributors} field or its own) and applies an
 * {@link AtomicOperation}'s {@link AtomicOperation#instance() instance}, so that the rules of a quorum
 * ({@link Policy#quorumOn()}) run on it. A breaker with a quorum refuses, when it is built, a store without it.
 *
 * <p>A marker: a store implements it, or a decorating store forwards it from what it wraps (the default
 * {@link Store#capability} lookup does).
 */
public interface QuorumState {
}
