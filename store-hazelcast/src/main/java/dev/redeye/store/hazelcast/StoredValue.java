package dev.redeye.store.hazelcast;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one entry of the map holds for an operation, decoded: its state (with the expiry that makes it read as
 * absent, and the transition that wrote it), or the last version of a deleted state, and its live trial claims.
 * One entry holds all of it, so that every store call changes it in one atomic step (one entry processor, or
 * one {@code replace}); {@link StateValues} encodes it as one {@code String}. Immutable.
 *
 * <p><b>Expiry lives in the value.</b> A state that is not pinned ({@link BreakerState#pinned()}: forced, or a
 * stored mode, an operator's decision that must not lapse) carries {@code expiresAt} (epoch ms) and reads as
 * absent from then on, whatever Hazelcast's own entry expiry says: in CAS mode a conditional write cannot set an
 * entry's ttl in the same step ({@code replace} has no ttl argument), and a ttl set in a second step could land
 * on another client's newer, pinned state. An expired state still holds its version, so that the key's next life
 * starts above it. The entry's Hazelcast ttl ({@link #cleanUpAt()}) only collects garbage.
 */
final class StoredValue {
    /** An expiry that never comes. */
    static final long NEVER = Long.MAX_VALUE;
    /** An entry that holds nothing (absent, or to be removed). */
    static final StoredValue NOTHING = new StoredValue(null, null, null, NEVER, BreakerState.UNKNOWN_VERSION, Map.of());

    /** The stored state, expired or not; null when there is none. */
    final BreakerState state;
    /** The transition whose write this value is, or null (the feed delivers only these). */
    final TransitionKind kind;
    final BreakerStatus from;
    /**
     * With a state: the epoch ms from which it reads as absent ({@link #NEVER} while pinned). Without one, with
     * a tombstone: the epoch ms after which the tombstone may be collected.
     */
    final long expiresAt;
    /** Without a state: the last version of the deleted state, or {@link BreakerState#UNKNOWN_VERSION}. */
    final long tombstone;
    /** The trial claims: token to the epoch ms at which the claim expires, in the order they were made. */
    final Map<String, Long> claims;

    StoredValue(BreakerState state, TransitionKind kind, BreakerStatus from, long expiresAt, long tombstone,
            Map<String, Long> claims) {
        this.state = state;
        this.kind = state == null ? null : kind;
        this.from = state == null ? null : from;
        this.expiresAt = state != null && state.pinned() ? NEVER : expiresAt;
        this.tombstone = state == null ? tombstone : BreakerState.UNKNOWN_VERSION;
        this.claims = claims.isEmpty() ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(claims));
    }

    /** A state written at {@code clockMillis} with {@code ttlMillis} to live (none if pinned), with claims. */
    static StoredValue of(BreakerState state, TransitionEvent event, long clockMillis, long ttlMillis,
            Map<String, Long> claims) {
        return new StoredValue(state, event == null ? null : event.kind(), event == null ? null : event.from(),
                expiry(clockMillis, ttlMillis), BreakerState.UNKNOWN_VERSION, claims);
    }

    /** Whether nothing is stored: no state, no tombstone, no claim (the entry is removed). */
    boolean isEmpty() {
        return state == null && tombstone == BreakerState.UNKNOWN_VERSION && claims.isEmpty();
    }

    /** The state as a reader sees it at {@code clockMillis}: null if there is none or it expired. */
    BreakerState live(long clockMillis) {
        return state != null && clockMillis < expiresAt ? state : null;
    }

    /**
     * The version a new life of the key starts at: above the last version the entry remembers (an expired
     * state's, or a tombstone's), and at least the clock in microseconds (see the package Javadoc on versions).
     */
    long newLifeBase(long clockMillis) {
        long last = state != null ? state.version() : tombstone;
        long clockMicros = Math.max(clockMillis, 0L) * 1000L;
        return last == BreakerState.UNKNOWN_VERSION || last < 0 ? clockMicros : Math.max(clockMicros, last + 1);
    }

    /** The state an atomic operation starts from at {@code clockMillis}: the live state, or a new life. */
    BreakerState current(long clockMillis) {
        BreakerState s = live(clockMillis);
        return s != null ? s : BreakerState.initial(newLifeBase(clockMillis));
    }

    /** The claims still live at {@code clockMillis}, as a mutable copy. */
    Map<String, Long> liveClaims(long clockMillis) {
        Map<String, Long> m = new LinkedHashMap<>(claims);
        m.values().removeIf(expiresAt -> expiresAt <= clockMillis);
        return m;
    }

    /** The same state (no longer marked as a transition's write: it is not one) with other claims. */
    StoredValue withClaims(Map<String, Long> newClaims) {
        return new StoredValue(state, null, null, expiresAt, tombstone, newClaims);
    }

    /**
     * What {@code delete} leaves: a tombstone of the state's last version, kept until {@code tombstoneUntil},
     * and no claims; nothing when there was neither a state nor a tombstone.
     */
    StoredValue deleted(long tombstoneUntil) {
        if (state != null) {
            return new StoredValue(null, null, null, tombstoneUntil, Math.max(state.version(), 0L), Map.of());
        }
        return tombstone == BreakerState.UNKNOWN_VERSION ? NOTHING
                : new StoredValue(null, null, null, expiresAt, tombstone, Map.of());
    }

    /**
     * The epoch ms after which nothing in the entry matters any more, for Hazelcast's entry ttl (garbage
     * collection only): {@link #NEVER} while a pinned state is stored, else the latest of the state's or the
     * tombstone's expiry and the claims' expiries.
     */
    long cleanUpAt() {
        long at = state == null && tombstone == BreakerState.UNKNOWN_VERSION ? Long.MIN_VALUE : expiresAt;
        for (long c : claims.values()) {
            at = Math.max(at, c);
        }
        return at;
    }

    /** The event this value stands for, or null if it was not written by a transition. */
    TransitionEvent event(String operation) {
        return kind == null ? null : new TransitionEvent(operation, kind, from, state);
    }

    /** {@code clockMillis + ttlMillis}, or {@link #NEVER} for no ttl (0) and on overflow. */
    static long expiry(long clockMillis, long ttlMillis) {
        if (ttlMillis <= 0) {
            return NEVER;
        }
        return clockMillis > NEVER - ttlMillis ? NEVER : clockMillis + ttlMillis;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof StoredValue)) {
            return false;
        }
        StoredValue v = (StoredValue) o;
        return java.util.Objects.equals(state, v.state) && kind == v.kind && from == v.from && expiresAt == v.expiresAt
                && tombstone == v.tombstone && claims.equals(v.claims);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(state, kind, from, expiresAt, tombstone, claims);
    }

    @Override
    public String toString() {
        String v = StateValues.encode(this);
        return v == null ? "nothing" : v;
    }
}
