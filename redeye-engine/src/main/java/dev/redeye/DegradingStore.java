package dev.redeye;

import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.TrialClaims;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * The store decorator behind {@link StoreErrorPolicy#LOCAL}: every operation goes to the real store first;
 * when it throws {@link StoreException}, the error is reported and the operation runs against an in-process
 * {@link InMemoryStore} instead, seeded (once per outage of a key) with the last state the real store returned
 * for that key. The real store gets a fresh chance on every call and, as soon as it answers, is the truth
 * again: nothing written during the outage is replayed.
 *
 * <p>It offers exactly the capabilities of the real store (so the engine's warnings and fallbacks stay the
 * same), except the feed, which is the real store's own: the in-process store's events are not the fleet's.
 */
final class DegradingStore implements Store {
    private final Store real;
    private final InMemoryStore memory = new InMemoryStore();
    private final BiConsumer<String, StoreException> onError;
    private final ConcurrentHashMap<String, BreakerState> lastSeen = new ConcurrentHashMap<>();
    private final Set<String> seeded = ConcurrentHashMap.newKeySet();
    private final AtomicRecording recording;
    private final TrialClaims claims;
    private final AtomicTransitions transitions;
    private final TransitionFeed feed;

    DegradingStore(Store real, BiConsumer<String, StoreException> onError) {
        this.real = real;
        this.onError = onError;
        AtomicRecording r = real.capability(AtomicRecording.class).orElse(null);
        TrialClaims c = real.capability(TrialClaims.class).orElse(null);
        AtomicTransitions t = real.capability(AtomicTransitions.class).orElse(null);
        this.recording = r == null ? null : new Recording(r);
        this.claims = c == null ? null : new Claims(c);
        this.transitions = t == null ? null : new Transitions(t);
        this.feed = real.capability(TransitionFeed.class).orElse(null);
    }

    @Override
    public Optional<BreakerState> get(String key) {
        return attempt(key, () -> {
            Optional<BreakerState> s = real.get(key);
            s.ifPresentOrElse(v -> lastSeen.put(key, v), () -> lastSeen.remove(key));
            return s;
        }, () -> memory.get(key));
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        attempt(key, () -> {
            real.put(key, state, ttl);
            lastSeen.put(key, state);
            return null;
        }, () -> {
            memory.put(key, state, ttl);
            return null;
        });
    }

    @Override
    public void delete(String key) {
        attempt(key, () -> {
            real.delete(key);
            lastSeen.remove(key);
            return null;
        }, () -> {
            memory.delete(key);
            return null;
        });
    }

    @Override
    public <C> Optional<C> capability(Class<C> type) {
        Object c = null;
        if (type == AtomicRecording.class) {
            c = recording;
        } else if (type == TrialClaims.class) {
            c = claims;
        } else if (type == AtomicTransitions.class) {
            c = transitions;
        } else if (type == TransitionFeed.class) {
            c = feed;
        }
        return c == null ? Optional.empty() : Optional.of(type.cast(c));
    }

    @Override
    public void close() {
        try {
            real.close();
        } finally {
            memory.close();
        }
    }

    /** Closes the in-process store only; the real one belongs to the user ({@code closeStore(false)}). */
    void closeLocalOnly() {
        memory.close();
    }

    private <T> T attempt(String key, Supplier<T> onReal, Supplier<T> onMemory) {
        T result;
        try {
            result = onReal.get();
        } catch (StoreException e) {
            onError.accept(key, e);
            seed(key);
            return onMemory.get();
        }
        seeded.remove(key);
        return result;
    }

    private StateChange remember(String key, StateChange ch) {
        lastSeen.put(key, ch.state());
        return ch;
    }

    /** On the first failure of an outage, the in-memory state of the key becomes the last real state seen. */
    private void seed(String key) {
        if (seeded.add(key)) {
            BreakerState last = lastSeen.get(key);
            memory.delete(key);
            if (last != null) {
                memory.put(key, last, Duration.ofDays(1));
            }
        }
    }

    private final class Recording implements AtomicRecording {
        private final AtomicRecording r;

        Recording(AtomicRecording r) {
            this.r = r;
        }

        @Override
        public StateChange recordFailure(String key, Policy policy, long now) {
            return attempt(key, () -> remember(key, r.recordFailure(key, policy, now)),
                    () -> memory.recordFailure(key, policy, now));
        }

        @Override
        public StateChange recordSuccess(String key, Policy policy, long now) {
            return attempt(key, () -> remember(key, r.recordSuccess(key, policy, now)),
                    () -> memory.recordSuccess(key, policy, now));
        }

        @Override
        public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
            return attempt(key, () -> remember(key, r.recordOutcome(key, success, policy, now)),
                    () -> memory.recordOutcome(key, success, policy, now));
        }
    }

    private final class Claims implements TrialClaims {
        private final TrialClaims c;

        Claims(TrialClaims c) {
            this.c = c;
        }

        @Override
        public Optional<String> claimTrial(String key, int permits, Duration ttl) {
            return attempt(key, () -> c.claimTrial(key, permits, ttl), () -> memory.claimTrial(key, permits, ttl));
        }

        @Override
        public void releaseTrial(String key, String token) {
            // the token may come from either side; releasing an unknown token is a no-op on both
            memory.releaseTrial(key, token);
            attempt(key, () -> {
                c.releaseTrial(key, token);
                return null;
            }, () -> null);
        }
    }

    private final class Transitions implements AtomicTransitions {
        private final AtomicTransitions t;

        Transitions(AtomicTransitions t) {
            this.t = t;
        }

        @Override
        public StateChange trialSucceeded(String key, long trialVersion, Policy policy, long now) {
            return attempt(key, () -> remember(key, t.trialSucceeded(key, trialVersion, policy, now)),
                    () -> memory.trialSucceeded(key, trialVersion, policy, now));
        }

        @Override
        public StateChange trialFailed(String key, long trialVersion, Policy policy, long now) {
            return attempt(key, () -> remember(key, t.trialFailed(key, trialVersion, policy, now)),
                    () -> memory.trialFailed(key, trialVersion, policy, now));
        }

        @Override
        public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
            return attempt(key, () -> remember(key, t.force(key, status, policy, now)),
                    () -> memory.force(key, status, policy, now));
        }
    }
}
