package dev.redeye.store.hazelcast;

import dev.redeye.api.AtomicOperation;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import java.util.Optional;

/**
 * How a {@link HazelcastStore} reads and changes the maps: {@link NativeOperations} (entry processors on the
 * members) or {@link CasOperations} (compare-and-set from the client). Both read and write the same values
 * ({@link StateValues}, {@link ClaimValues}), so clients in either mode share one map. Implementations let
 * Hazelcast's exceptions through; the store wraps them.
 */
interface Operations {

    /** "native" or "cas". */
    String mode();

    /** The live state of a key; empty for an absent key or a tombstone. */
    Optional<BreakerState> get(String key);

    /** One atomic state change (the claims of a forced close or half-open go in the store's second step). */
    StateChange change(String key, AtomicOperation op, Policy policy, long now);

    /** Replaces a live state by its tombstone (see {@link DeleteProcessor}). */
    void delete(String key);

    /** Adds a claim holding {@code token} if fewer than {@code permits} are live. */
    boolean claim(String key, String token, int permits, long ttlMillis);

    /** Removes the claim holding {@code token}, if any. */
    void release(String key, String token);
}
