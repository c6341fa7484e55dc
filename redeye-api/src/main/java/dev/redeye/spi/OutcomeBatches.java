package dev.redeye.spi;

/**
 * Capability: the store applies a batch of outcomes ({@link AtomicOperation#outcomes}, rule
 * {@link AtomicOperation.Kind#OUTCOMES}) as one atomic step, leaving the state its outcomes one by one would
 * leave (the TCK's R14 rules). A store that applies {@link AtomicOperation#apply} in Java where its data lives has
 * it by declaring it; a store that runs the rules in its own language must implement the fold there first. A
 * breaker with {@code recordBatching} refuses, when it is built, a store without it.
 *
 * <p>A marker: a store implements it, or a decorating store forwards it from what it wraps (the default
 * {@link Store#capability} lookup does).
 */
public interface OutcomeBatches {
}
