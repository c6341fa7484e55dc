package dev.redeye.store.hazelcast;

import com.hazelcast.map.IMap;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.support.Backoff;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * CAS mode, for members that cannot run redeye's processors: read the entry, compute the new value on the client
 * with {@link Updates} (the code the processors run), then write it in <b>one</b> conditional map operation —
 * {@code replace(key, old, new)}, {@code putIfAbsent} for an absent key, {@code remove(key, old)} when nothing is
 * left — and retry on a lost race, up to {@code attempts} times with a short jittered pause; past that, a
 * {@link StoreException}. Values are {@code String}s: in the default BINARY in-memory format a member compares
 * their serialized bytes, in OBJECT format {@code String.equals}; either way it needs no redeye class.
 *
 * <p><b>Why one operation.</b> The state, its expiry and the key's trial claims are all in the value, so the
 * conditional write that changes one changes all of them. Hazelcast's {@code replace} has no ttl argument (and
 * resets the entry's ttl to the map's default, "never"), and a {@code setTtl} after it would be a second step that
 * can land on another client's newer value: on a forced state it would make the breaker close by itself. So this
 * mode never calls {@code setTtl}: expiry is read from the value ({@link StoredValue}), and Hazelcast's entry ttl,
 * garbage collection only, is set when the entry is created ({@code putIfAbsent} takes one) and is gone after its
 * first {@code replace}. Entries rewritten in CAS mode stay in the map until a native client rewrites them or the
 * operation is deleted; their values read as absent once expired.
 *
 * <p><b>Clocks.</b> Expiries, claim expiries and a new life's version base use this client's clock: trial claim
 * ttls and state ttls must dwarf the clock skew between clients (they do: seconds and hours against
 * milliseconds). A deleted key's tombstone covers the rest.
 */
final class CasOperations implements Operations {
    private final IMap<String, Object> states;
    private final long tombstoneTtlMillis;
    /** After a lost race: up to 250 µs, doubling to at most 4 ms. */
    private static final Backoff BACKOFF = new Backoff(Duration.ofNanos(250_000), Duration.ofMillis(4));
    private final int attempts;

    CasOperations(IMap<String, Object> states, long tombstoneTtlMillis, int attempts) {
        this.states = states;
        this.tombstoneTtlMillis = tombstoneTtlMillis;
        this.attempts = attempts;
    }

    @Override
    public String mode() {
        return "cas";
    }

    /** One step of a call: what {@link Updates} makes of the value read, at this client's clock. */
    @FunctionalInterface
    private interface Step<T> {
        Updates.Update<T> apply(StoredValue current, long clockMillis);
    }

    /** {@inheritDoc} Expiry by this client's clock, the one its writes store. */
    @Override
    public Optional<BreakerState> get(String key) {
        return Optional.ofNullable(StateValues.decode(states.get(key), StateValues.where(key))
                .live(System.currentTimeMillis()));
    }

    @Override
    public StateChange change(String key, AtomicOperation op, Policy policy, long now) {
        boolean removesClaims = op.removesClaims();
        return loop(key, "a state change", false,
                (cur, clock) -> Updates.change(key, cur, op, removesClaims, policy, now, clock));
    }

    @Override
    public void put(String key, BreakerState state, long ttlMillis) {
        loop(key, "a put", true, (cur, clock) -> Updates.put(cur, state, ttlMillis, clock));
    }

    @Override
    public void delete(String key) {
        loop(key, "a delete", true, (cur, clock) -> Updates.delete(cur, tombstoneTtlMillis, clock));
    }

    @Override
    public boolean claim(String key, String token, int permits, long ttlMillis) {
        return loop(key, "a trial claim", false, (cur, clock) -> Updates.claim(cur, token, permits, ttlMillis, clock));
    }

    @Override
    public void release(String key, String token) {
        loop(key, "a trial release", false, (cur, clock) -> Updates.release(cur, token, clock));
    }

    /**
     * Read, compute, compare-and-set, until the write wins or there is nothing to write.
     *
     * @param overwritesMalformed whether malformed data under the key is replaced (put, delete) rather than
     *                            reported (every other call: never a silent reset)
     */
    private <T> T loop(String key, String what, boolean overwritesMalformed, Step<T> step) {
        String where = StateValues.where(key);
        for (int attempt = 1; attempt <= attempts; attempt++) {
            Object raw = states.get(key);
            StoredValue current;
            boolean malformed = false;
            try {
                current = StateValues.decode(raw, where);
            } catch (StoreException e) {
                if (!overwritesMalformed) {
                    throw e;
                }
                current = StoredValue.NOTHING;
                malformed = true;
            }
            long clock = System.currentTimeMillis();
            Updates.Update<T> u = step.apply(current, clock);
            StoredValue next = u.next == null && malformed ? StoredValue.NOTHING : u.next;
            if (next == null || write(key, raw, next, clock)) {
                return u.answer;
            }
            BACKOFF.pause(attempt, Backoff.NO_DEADLINE, what + " at " + where);
        }
        throw lost(what, where);
    }

    /** The one conditional write of a step; whether it won. */
    private boolean write(String key, Object expected, StoredValue next, long clockMillis) {
        String value = StateValues.encode(next);
        if (expected == null) {
            return value == null || states.putIfAbsent(key, value, MemberProcessor.entryTtl(next, clockMillis),
                    TimeUnit.MILLISECONDS) == null;
        }
        return value == null ? states.remove(key, expected) : states.replace(key, expected, value);
    }

    private StoreException lost(String what, String where) {
        return new StoreException("Hazelcast CAS mode lost the compare-and-set race " + attempts + " times in a row for "
                + what + " at " + where + ": too much contention on one key (raise casAttempts, or run the store's"
                + " jar on the members for native mode)");
    }
}
