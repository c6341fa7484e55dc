package dev.redeye.store.hazelcast;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import java.util.Optional;

/**
 * How a {@link HazelcastStore} changes the map: {@link NativeOperations} (entry processors on the members) or
 * {@link CasOperations} (compare-and-set from the client). Each method is one atomic step on the operation's
 * one entry, computed by {@link Updates} in both modes, so clients in either mode share one map. A read judges
 * expiry by the clock the mode writes with (the cluster clock on a member, the client's in CAS mode).
 * Implementations let Hazelcast's exceptions through; the store wraps them.
 */
interface Operations {

    /** "native" or "cas". */
    String mode();

    /** The key's live state, if any: one read. */
    Optional<BreakerState> get(String key);

    /** One atomic state change, with the removal of the key's claims when the operation asks for it. */
    StateChange change(String key, AtomicOperation op, Policy policy, long now);

    /** Writes the state with the ttl (none if pinned: forced, or a stored mode), keeping the key's claims. */
    void put(String key, BreakerState state, long ttlMillis);

    /** Replaces a live state by its tombstone and removes the key's claims (see {@link DeleteProcessor}). */
    void delete(String key);

    /** Adds a claim holding {@code token} if fewer than {@code permits} are live. */
    boolean claim(String key, String token, int permits, long ttlMillis);

    /** Removes the claim holding {@code token}, if any. */
    void release(String key, String token);
}
