package dev.redeye.store.hazelcast;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import java.util.Map;

/**
 * The one implementation of what each store call does to an operation's entry, from the value it finds to the
 * value it leaves: run by the entry processors on the member owning the key (native mode, under Hazelcast's
 * per-key lock) and by the client between its read and its compare-and-set (CAS mode). Both modes therefore
 * write the same values. {@code clockMillis} is the store's clock (the cluster clock on a member, the client's
 * clock in CAS mode): it decides expiries and a new life's version base, never a breaker rule ({@code now} comes
 * from the caller).
 */
final class Updates {
    private Updates() {
    }

    /** One step's outcome: the value to write ({@code null}: write nothing) and the call's answer. */
    static final class Update<T> {
        final StoredValue next;
        final T answer;

        private Update(StoredValue next, T answer) {
            this.next = next;
            this.answer = answer;
        }

        static <T> Update<T> write(StoredValue next, T answer) {
            return new Update<>(next, answer);
        }

        static <T> Update<T> none(T answer) {
            return new Update<>(null, answer);
        }
    }

    /**
     * One atomic operation: its rule applied to the live state (or a new life), written with the policy's
     * stateTtl (none while pinned: forced, or a stored mode). {@code removesClaims} (the client's {@link AtomicOperation#removesClaims()})
     * removes every claim in the same write, also when the rule changes nothing; otherwise the live claims stay.
     */
    static Update<StateChange> change(String key, StoredValue cur, AtomicOperation op, boolean removesClaims,
            Policy policy, long now, long clockMillis) {
        StateChange c = op.apply(cur.current(clockMillis), policy, now);
        if (!c.changed()) {
            return removesClaims && !cur.claims.isEmpty() ? Update.write(cur.withClaims(Map.of()), c) : Update.none(c);
        }
        Map<String, Long> claims = removesClaims ? Map.of() : cur.liveClaims(clockMillis);
        return Update.write(StoredValue.of(c.state(), c.toEvent(key, policy, now), clockMillis,
                policy.stateTtlMillis(), claims), c);
    }

    /** {@code put}: the given state with the given ttl (none if pinned); the key's claims stay. */
    static Update<Void> put(StoredValue cur, BreakerState state, long ttlMillis, long clockMillis) {
        return Update.write(StoredValue.of(state, null, clockMillis, ttlMillis, cur.liveClaims(clockMillis)), null);
    }

    /** {@code delete}: a tombstone of the state's last version (kept {@code tombstoneTtlMillis}), no claims. */
    static Update<Void> delete(StoredValue cur, long tombstoneTtlMillis, long clockMillis) {
        StoredValue next = cur.deleted(StoredValue.expiry(clockMillis, tombstoneTtlMillis));
        return next.equals(cur) ? Update.none(null) : Update.write(next, null);
    }

    /** {@code claimTrial}: adds the token if fewer than {@code permits} claims are live at {@code clockMillis}. */
    static Update<Boolean> claim(StoredValue cur, String token, int permits, long ttlMillis, long clockMillis) {
        Map<String, Long> live = cur.liveClaims(clockMillis);
        if (live.size() >= permits) {
            return Update.none(false);
        }
        live.put(token, StoredValue.expiry(clockMillis, ttlMillis));
        return Update.write(cur.withClaims(live), true);
    }

    /** {@code releaseTrial}: removes exactly this token's claim (compare-and-delete), if it is there. */
    static Update<Boolean> release(StoredValue cur, String token, long clockMillis) {
        if (!cur.claims.containsKey(token)) {
            return Update.none(false);
        }
        Map<String, Long> live = cur.liveClaims(clockMillis);
        live.remove(token);
        return Update.write(cur.withClaims(live), true);
    }
}
