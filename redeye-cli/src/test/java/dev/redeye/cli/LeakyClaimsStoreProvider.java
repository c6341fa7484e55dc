package dev.redeye.cli;

import dev.redeye.InMemoryStore;
import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.StoreProvider;
import dev.redeye.api.TrialClaims;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Test fixture, scheme {@code leaky:}: a shared in-memory store (one per URI) whose trial claims never
 * refuse, like the TCK's deliberately broken stores. Everything else is the real {@link InMemoryStore}.
 */
public final class LeakyClaimsStoreProvider implements StoreProvider {
    private static final Map<String, InMemoryStore> BACKENDS = new ConcurrentHashMap<>();

    /** ServiceLoader calls this. */
    public LeakyClaimsStoreProvider() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("leaky");
    }

    @Override
    public Store open(String uri) {
        return new Client(BACKENDS.computeIfAbsent(uri, u -> new InMemoryStore()).newClient());
    }

    private static final class Client implements Store, AtomicRecording, AtomicTransitions, TrialClaims {
        private final Store d;

        Client(Store d) {
            this.d = d;
        }

        private <C> C cap(Class<C> type) {
            return d.capability(type).orElseThrow();
        }

        @Override
        public Optional<BreakerState> get(String key) {
            return d.get(key);
        }

        @Override
        public void put(String key, BreakerState state, Duration ttl) {
            d.put(key, state, ttl);
        }

        @Override
        public void delete(String key) {
            d.delete(key);
        }

        @Override
        public void close() {
            d.close();
        }

        @Override
        public StateChange recordFailure(String key, Policy policy, long now) {
            return cap(AtomicRecording.class).recordFailure(key, policy, now);
        }

        @Override
        public StateChange recordSuccess(String key, Policy policy, long now) {
            return cap(AtomicRecording.class).recordSuccess(key, policy, now);
        }

        @Override
        public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
            return cap(AtomicRecording.class).recordOutcome(key, success, policy, now);
        }

        @Override
        public StateChange trialSucceeded(String key, Policy policy, long now) {
            return cap(AtomicTransitions.class).trialSucceeded(key, policy, now);
        }

        @Override
        public StateChange trialFailed(String key, Policy policy, long now) {
            return cap(AtomicTransitions.class).trialFailed(key, policy, now);
        }

        @Override
        public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
            return cap(AtomicTransitions.class).force(key, status, policy, now);
        }

        /** The defect: every caller wins. */
        @Override
        public Optional<String> claimTrial(String key, int permits, Duration ttl) {
            return Optional.of(UUID.randomUUID().toString());
        }

        @Override
        public void releaseTrial(String key, String token) {
            // nothing was held
        }
    }
}
