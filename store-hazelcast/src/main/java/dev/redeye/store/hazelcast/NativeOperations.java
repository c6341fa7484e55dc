package dev.redeye.store.hazelcast;

import com.hazelcast.map.IMap;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import java.util.Optional;

/**
 * Native mode: every call is one {@code executeOnKey}, an entry processor that runs on the member owning the key
 * (one network hop; Hazelcast serializes processors of one key).
 */
final class NativeOperations implements Operations {
    private final IMap<String, Object> states;
    private final long tombstoneTtlMillis;

    NativeOperations(IMap<String, Object> states, long tombstoneTtlMillis) {
        this.states = states;
        this.tombstoneTtlMillis = tombstoneTtlMillis;
    }

    @Override
    public String mode() {
        return "native";
    }

    @Override
    public Optional<BreakerState> get(String key) {
        String live = check(states.executeOnKey(key, new ReadProcessor()));
        return Optional.ofNullable(StateValues.decode(live, StateValues.where(key)).state);
    }

    @Override
    public StateChange change(String key, AtomicOperation op, Policy policy, long now) {
        String reply = states.executeOnKey(key, new StateProcessor(op, policy, now));
        return StateValues.readResult(reply, StateValues.where(key));
    }

    @Override
    public void put(String key, BreakerState state, long ttlMillis) {
        check(states.executeOnKey(key, new PutProcessor(state, ttlMillis)));
    }

    @Override
    public void delete(String key) {
        check(states.executeOnKey(key, new DeleteProcessor(tombstoneTtlMillis)));
    }

    @Override
    public boolean claim(String key, String token, int permits, long ttlMillis) {
        return "1".equals(check(states.executeOnKey(key, ClaimProcessor.claim(token, permits, ttlMillis))));
    }

    @Override
    public void release(String key, String token) {
        check(states.executeOnKey(key, ClaimProcessor.release(token)));
    }

    /** Throws the error a processor reported (malformed data on the member). */
    private static String check(String reply) {
        if (reply != null && reply.startsWith("E")) {
            throw new StoreException(reply.substring(1));
        }
        return reply;
    }
}
