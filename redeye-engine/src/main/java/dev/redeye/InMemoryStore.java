package dev.redeye;

import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.FeedSubscribers;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.StoreException;
import dev.redeye.api.Transitions;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.TrialClaims;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-process store local mode runs on: every capability, applying {@link Transitions} under a per-key
 * monitor. Zero dependencies, thread-safe.
 *
 * <p>Reads are lock-free (a {@link ConcurrentHashMap} lookup and a volatile read). Each atomic operation
 * holds the monitor of one key only for the duration of the rule, never during a user's call. Trial claims
 * expire by real time ({@link System#nanoTime()}), as the SPI allows. The ttl given to {@link #put} is
 * accepted but not enforced: the state of an in-memory breaker lives as long as the store.
 *
 * <p>The transition feed is in-process: events are queued in version order per key and delivered on one
 * daemon thread per store, started with the first subscription and stopped by {@link #close()}.
 *
 * <p>{@link #newClient()} returns an independent client view of the same data (its own subscriptions and
 * its own {@code close()}); several views stand for several processes sharing one backend, which is how the
 * fleet simulation and the TCK use this store. {@code Stores.open("memory:")} returns a new, empty store.
 */
public final class InMemoryStore implements Store, AtomicRecording, TrialClaims, AtomicTransitions, TransitionFeed {
    private static final Logger LOG = LoggerFactory.getLogger(InMemoryStore.class);

    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
    private final FeedSubscribers subscribers = new FeedSubscribers((what, t) -> LOG.warn("{}", what, t));
    private final LinkedBlockingQueue<Runnable> deliveries = new LinkedBlockingQueue<>();
    private final Object feedLock = new Object();
    private volatile Thread feedThread;
    private volatile boolean closed;

    /** A new, empty store. */
    public InMemoryStore() {
    }

    /**
     * The state stored under {@code key}, or {@code null}, without allocating: the engine's local-mode fast
     * path. Fails like {@link #get} after close.
     */
    BreakerState peek(String key) {
        ensureOpen();
        Entry e = entries.get(key);
        return e == null ? null : e.state;
    }

    @Override
    public Optional<BreakerState> get(String key) {
        Objects.requireNonNull(key, "key");
        return Optional.ofNullable(peek(key));
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(state, "state");
        ensureOpen();
        update(key, e -> {
            e.state = state;
            return null;
        });
    }

    @Override
    public void delete(String key) {
        Objects.requireNonNull(key, "key");
        ensureOpen();
        Entry e = entries.get(key);
        if (e != null) {
            synchronized (e) {
                e.removed = true;
                entries.remove(key, e);
            }
        }
    }

    @Override
    public StateChange recordFailure(String key, Policy policy, long now) {
        return apply(key, policy, s -> Transitions.recordFailure(s, policy, now), now);
    }

    @Override
    public StateChange recordSuccess(String key, Policy policy, long now) {
        return apply(key, policy, s -> Transitions.recordSuccess(s, policy, now), now);
    }

    @Override
    public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
        return apply(key, policy, s -> Transitions.recordOutcome(s, success, policy, now), now);
    }

    @Override
    public StateChange trialSucceeded(String key, long trialVersion, Policy policy, long now) {
        return apply(key, policy, s -> Transitions.trialSucceeded(s, trialVersion, policy, now), now);
    }

    @Override
    public StateChange trialFailed(String key, long trialVersion, Policy policy, long now) {
        return apply(key, policy, s -> Transitions.trialFailed(s, trialVersion, policy, now), now);
    }

    @Override
    public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
        Objects.requireNonNull(status, "status");
        return apply(key, policy, s -> Transitions.force(s, status, policy, now), now,
                status == BreakerStatus.CLOSED);
    }

    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        Objects.requireNonNull(key, "key");
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be >= 1, was " + permits);
        }
        if (ttl == null || ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must be positive, was " + ttl);
        }
        ensureOpen();
        long nowNanos = System.nanoTime();
        long expiresAt = nowNanos + ttl.toNanos();
        return update(key, e -> {
            e.pruneClaims(nowNanos);
            if (e.claims.size() >= permits) {
                return Optional.<String>empty();
            }
            String token = UUID.randomUUID().toString();
            e.claims.add(new Claim(token, expiresAt));
            return Optional.of(token);
        });
    }

    @Override
    public void releaseTrial(String key, String token) {
        Objects.requireNonNull(key, "key");
        ensureOpen();
        if (token == null) {
            return;
        }
        Entry e = entries.get(key);
        if (e == null) {
            return;
        }
        synchronized (e) {
            e.claims.removeIf(c -> c.token.equals(token));
        }
    }

    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(onGap, "onGap");
        ensureOpen();
        startFeedThread();
        return subscribers.add(listener, onGap);
    }

    /**
     * Simulates a dropped feed connection: every current subscriber's {@code onGap} runs (on the feed
     * thread, in order with events). For tests of gap handling; a real in-memory feed never drops.
     */
    public void simulateFeedGap() {
        ensureOpen();
        startFeedThread();
        deliveries.add(subscribers::signalGap);
    }

    /**
     * A new independent client of this store's data: it reads and writes the same states and claims and
     * receives the same feed, but has its own subscriptions and its own {@code close()}, which ends only
     * those subscriptions and makes only that client fail fast. Closing this store closes every client.
     *
     * @throws StoreException if this store is closed
     */
    public Store newClient() {
        ensureOpen();
        return new Client(this);
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        subscribers.clear();
        Thread t;
        synchronized (feedLock) {
            t = feedThread;
            feedThread = null;
        }
        if (t != null) {
            t.interrupt();
        }
        deliveries.clear();
    }

    @Override
    public String toString() {
        return "InMemoryStore[" + entries.size() + " keys]";
    }

    private StateChange apply(String key, Policy policy, java.util.function.Function<BreakerState, StateChange> rule,
            long now) {
        return apply(key, policy, rule, now, false);
    }

    private StateChange apply(String key, Policy policy, java.util.function.Function<BreakerState, StateChange> rule,
            long now, boolean clearClaims) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(policy, "policy");
        ensureOpen();
        return update(key, e -> {
            StateChange c = rule.apply(e.state);
            if (c.changed()) {
                e.state = c.state();
            }
            if (clearClaims) {
                e.claims.clear();
            }
            if (c.isTransition() && !subscribers.isEmpty()) {
                TransitionEvent ev = c.toEvent(key, policy, now);
                deliveries.add(() -> subscribers.publish(ev));
            }
            return c;
        });
    }

    /** Runs {@code action} under the monitor of the live entry of {@code key}, creating it if needed. */
    private <T> T update(String key, java.util.function.Function<Entry, T> action) {
        while (true) {
            Entry e = entries.computeIfAbsent(key, k -> new Entry());
            synchronized (e) {
                if (e.removed) {
                    continue; // deleted between lookup and lock: retry on the new entry
                }
                return action.apply(e);
            }
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreException("InMemoryStore is closed");
        }
    }

    private void startFeedThread() {
        if (feedThread != null) {
            return;
        }
        synchronized (feedLock) {
            if (feedThread != null || closed) {
                return;
            }
            Thread t = new Thread(this::runFeed, "redeye-memory-feed");
            t.setDaemon(true);
            feedThread = t;
            t.start();
        }
    }

    private void runFeed() {
        while (!closed) {
            Runnable r;
            try {
                r = deliveries.poll(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (r != null && !closed) {
                r.run();
            }
        }
    }

    private static final class Entry {
        volatile BreakerState state;
        final List<Claim> claims = new ArrayList<>(1);
        boolean removed;

        void pruneClaims(long nowNanos) {
            for (Iterator<Claim> it = claims.iterator(); it.hasNext();) {
                if (it.next().expiresAtNanos - nowNanos <= 0) {
                    it.remove();
                }
            }
        }
    }

    private static final class Claim {
        final String token;
        final long expiresAtNanos;

        Claim(String token, long expiresAtNanos) {
            this.token = token;
            this.expiresAtNanos = expiresAtNanos;
        }
    }

    /** A client view: shared data, own subscriptions, own closed flag. */
    private static final class Client implements Store, AtomicRecording, TrialClaims, AtomicTransitions,
            TransitionFeed {
        private final InMemoryStore backend;
        private final List<Subscription> subs = new CopyOnWriteArrayList<>();
        private volatile boolean closed;

        Client(InMemoryStore backend) {
            this.backend = backend;
        }

        private InMemoryStore b() {
            if (closed) {
                throw new StoreException("InMemoryStore client is closed");
            }
            return backend;
        }

        @Override
        public Optional<BreakerState> get(String key) {
            return b().get(key);
        }

        @Override
        public void put(String key, BreakerState state, Duration ttl) {
            b().put(key, state, ttl);
        }

        @Override
        public void delete(String key) {
            b().delete(key);
        }

        @Override
        public StateChange recordFailure(String key, Policy policy, long now) {
            return b().recordFailure(key, policy, now);
        }

        @Override
        public StateChange recordSuccess(String key, Policy policy, long now) {
            return b().recordSuccess(key, policy, now);
        }

        @Override
        public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
            return b().recordOutcome(key, success, policy, now);
        }

        @Override
        public Optional<String> claimTrial(String key, int permits, Duration ttl) {
            return b().claimTrial(key, permits, ttl);
        }

        @Override
        public void releaseTrial(String key, String token) {
            b().releaseTrial(key, token);
        }

        @Override
        public StateChange trialSucceeded(String key, long trialVersion, Policy policy, long now) {
            return b().trialSucceeded(key, trialVersion, policy, now);
        }

        @Override
        public StateChange trialFailed(String key, long trialVersion, Policy policy, long now) {
            return b().trialFailed(key, trialVersion, policy, now);
        }

        @Override
        public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
            return b().force(key, status, policy, now);
        }

        @Override
        public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
            Subscription inner = b().subscribe(listener, onGap);
            Subscription outer = new Subscription() {
                @Override
                public void close() {
                    inner.close();
                    subs.remove(this);
                }
            };
            subs.add(outer);
            return outer;
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            for (Subscription s : subs) {
                s.close();
            }
        }

        @Override
        public String toString() {
            return "InMemoryStore.client[" + backend + "]";
        }
    }
}
