package dev.redeye.store.hazelcast;

import com.hazelcast.core.EntryView;
import com.hazelcast.map.IMap;
import dev.redeye.api.AtomicOperation;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.StoreException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * CAS mode, for members that cannot run redeye's processors: read the value, apply the rule on the client,
 * then {@code replace(key, old, new)} (or {@code putIfAbsent} for an absent key), and retry on a lost race, up
 * to {@code attempts} times with a short jittered pause; past that, a {@link StoreException}. Values are
 * {@code String}s: in the default BINARY in-memory format a member compares their serialized bytes, in OBJECT
 * format {@code String.equals}; either way it needs no redeye class.
 *
 * <p><b>Expiry.</b> {@code replace} has no ttl argument and resets the entry's expiry to the map's default
 * ("never" unless the map is configured with a time-to-live), so each successful replace is followed by a
 * {@code setTtl}: the state's ttl, or none while forced. A write therefore costs three round trips (read,
 * replace, setTtl), a write to an absent key two (read, putIfAbsent with the ttl). If a slow client's setTtl
 * lands after another client forced the breaker, the forced state would get a ttl: {@link #get} reads the
 * entry's expiry with the value (same one round trip) and removes the ttl of a forced state that has one.
 *
 * <p><b>Clocks.</b> A new life's version base and claim expiries use this client's clock: trial claim ttls
 * and the gap between a key's expiry and its next life must dwarf the clock skew between clients (they do:
 * seconds against milliseconds, hours against milliseconds). A deleted key's tombstone covers the rest.
 */
final class CasOperations implements Operations {
    private final IMap<String, Object> states;
    private final IMap<String, Object> claims;
    private final long tombstoneTtlMillis;
    private final int attempts;

    CasOperations(IMap<String, Object> states, IMap<String, Object> claims, long tombstoneTtlMillis, int attempts) {
        this.states = states;
        this.claims = claims;
        this.tombstoneTtlMillis = tombstoneTtlMillis;
        this.attempts = attempts;
    }

    @Override
    public String mode() {
        return "cas";
    }

    @Override
    public Optional<BreakerState> get(String key) {
        EntryView<String, Object> view = states.getEntryView(key);
        if (view == null) {
            return Optional.empty();
        }
        BreakerState s = StateValues.decode(view.getValue(), StateValues.where(key)).state;
        if (s != null && s.forced() && view.getExpirationTime() != Long.MAX_VALUE) {
            // A late setTtl of another client's earlier write hit this forced state: forced never expires.
            states.setTtl(key, MemberProcessor.NO_EXPIRY, TimeUnit.MILLISECONDS);
        }
        return Optional.ofNullable(s);
    }

    @Override
    public StateChange change(String key, AtomicOperation op, Policy policy, long now) {
        String where = StateValues.where(key);
        for (int attempt = 1; attempt <= attempts; attempt++) {
            Object raw = states.get(key);
            StateValues.Decoded current = StateValues.decode(raw, where);
            StateChange change = op.apply(current.current(clockMicros()), policy, now);
            if (!change.changed()) {
                return change;
            }
            String value = StateValues.written(change, change.toEvent(key, policy, now));
            if (write(states, key, raw, value, StateProcessor.ttlOf(change.state(), policy))) {
                return change;
            }
            pause(attempt);
        }
        throw lost("a state change", where);
    }

    @Override
    public void delete(String key) {
        String where = StateValues.where(key);
        for (int attempt = 1; attempt <= attempts; attempt++) {
            Object raw = states.get(key);
            if (raw == null) {
                return;
            }
            String tombstone;
            try {
                tombstone = DeleteProcessor.tombstoneFor(StateValues.decode(raw, where));
            } catch (StoreException malformed) {
                if (states.remove(key, raw)) {
                    return;
                }
                pause(attempt);
                continue;
            }
            if (tombstone == null || write(states, key, raw, tombstone, tombstoneTtlMillis)) {
                return;
            }
            pause(attempt);
        }
        throw lost("a delete", where);
    }

    @Override
    public boolean claim(String key, String token, int permits, long ttlMillis) {
        String where = StateValues.where(key);
        for (int attempt = 1; attempt <= attempts; attempt++) {
            Object raw = claims.get(key);
            Map<String, Long> live = ClaimValues.parse(raw, where);
            long now = System.currentTimeMillis();
            if (!ClaimValues.tryAdd(live, permits, token, now, ttlMillis)) {
                return false;
            }
            if (write(claims, key, raw, ClaimValues.encode(live), ClaimValues.latestExpiry(live) - now)) {
                return true;
            }
            pause(attempt);
        }
        throw lost("a trial claim", where);
    }

    @Override
    public void release(String key, String token) {
        String where = StateValues.where(key);
        for (int attempt = 1; attempt <= attempts; attempt++) {
            Object raw = claims.get(key);
            Map<String, Long> live = ClaimValues.parse(raw, where);
            if (live.remove(token) == null) {
                return;
            }
            long now = System.currentTimeMillis();
            ClaimValues.prune(live, now);
            String value = ClaimValues.encode(live);
            boolean done = value == null
                    ? claims.remove(key, raw)
                    // replace resets the expiry: give it back the latest expiry of the claims that remain
                    : write(claims, key, raw, value, Math.max(1L, ClaimValues.latestExpiry(live) - now));
            if (done) {
                return;
            }
            pause(attempt);
        }
        throw lost("a trial release", where);
    }

    /**
     * Compare-and-set of one entry: {@code putIfAbsent} with the ttl when {@code expected} is null, else
     * {@code replace} then {@code setTtl} ({@link MemberProcessor#NO_EXPIRY} for none).
     *
     * @return whether the write won
     */
    private static boolean write(IMap<String, Object> map, String key, Object expected, String value, long ttlMillis) {
        if (expected == null) {
            return map.putIfAbsent(key, value, MemberProcessor.entryTtl(ttlMillis), TimeUnit.MILLISECONDS) == null;
        }
        if (!map.replace(key, expected, value)) {
            return false;
        }
        map.setTtl(key, MemberProcessor.entryTtl(ttlMillis), TimeUnit.MILLISECONDS);
        return true;
    }

    private static long clockMicros() {
        return System.currentTimeMillis() * 1000L;
    }

    /** Backs off after a lost race: a random pause of up to {@code min(attempt, 16) * 250} µs. */
    private static void pause(int attempt) {
        long maxNanos = Math.min(attempt, 16) * 250_000L;
        LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(maxNanos / 4, maxNanos + 1));
    }

    private StoreException lost(String what, String where) {
        return new StoreException("Hazelcast CAS mode lost the compare-and-set race " + attempts + " times in a row for "
                + what + " at " + where + ": too much contention on one key (raise casAttempts, or run the store's"
                + " jar on the members for native mode)");
    }
}
