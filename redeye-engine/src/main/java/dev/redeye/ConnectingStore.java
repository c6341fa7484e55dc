package dev.redeye;

import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreProvider;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.TrialClaims;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A store that opens its real store on first use and keeps trying until it succeeds ({@link OpenMode#LAZY}).
 * It declares the capabilities it is given, known before connecting, because a breaker looks them up once
 * when it is built; the store it connects to must offer at least those.
 *
 * <ul>
 * <li>The first use starts one connector thread and waits for its first attempt (at most
 * {@link #FIRST_WAIT_MILLIS}). While not connected, every call fails at once with a {@link StoreException}
 * naming the last failure; the thread retries with jittered backoff ({@link #FIRST_BACKOFF_MILLIS} doubling
 * to {@link #MAX_BACKOFF_MILLIS}) and ends once connected and every waiting subscription is started, or
 * when the store is closed.</li>
 * <li>A subscription made while not connected is held (a {@link Pending} one); the connector starts it on the
 * real store once connected, then runs its {@code onGap} (events of the time before are unknown to it). A held
 * subscription the real store refuses, whatever it throws, is retried with the same backoff.</li>
 * <li>Once connected, calls go straight to the real store (one volatile read more), whose own client deals
 * with later outages.</li>
 * </ul>
 *
 * <p>Thread-safe. {@link #close()} stops the connector (its attempt in progress finishes and its store, if
 * any, is closed) and closes the real store.
 */
final class ConnectingStore implements Store, AtomicRecording, TrialClaims, AtomicTransitions, TransitionFeed {
    private static final Logger LOG = LoggerFactory.getLogger(Stores.class);
    static final long FIRST_BACKOFF_MILLIS = 100;
    static final long MAX_BACKOFF_MILLIS = 5_000;
    /** The longest a first use waits for the first attempt (a provider's own bounds are shorter). */
    static final long FIRST_WAIT_MILLIS = 10_000;
    private static final List<Class<?>> CAPABILITIES = List.of(AtomicRecording.class, TrialClaims.class,
            AtomicTransitions.class, TransitionFeed.class);
    private static final AtomicLong THREADS = new AtomicLong();

    private final String description;
    private final Class<? extends Store> type;
    private final Supplier<? extends Store> opener;
    private final Set<Class<?>> declared;
    private final Object lock = new Object();
    /** Null until connected; never null again after (until close, which keeps it for closing). */
    private volatile Connected connected;

    // guarded by lock
    private boolean closed;
    private Thread connector;
    private boolean firstAttemptDone;
    private int failedAttempts;
    private Throwable lastError;
    private final List<Held> held = new ArrayList<>();

    /** The real store and its capabilities, looked up once. */
    private record Connected(Store store, AtomicRecording recording, TrialClaims claims,
            AtomicTransitions transitions, TransitionFeed feed) {
    }

    /**
     * @param description how messages and logs name the store (a redacted URI; never a password)
     * @param declared    the class of the real store and the capability interfaces to declare, a subset of the
     *                    four of the SPI
     * @param opener      opens the real store, connected, or throws; called on the connector thread
     * @throws IllegalArgumentException if a capability is not one of the SPI's four
     */
    ConnectingStore(String description, StoreProvider.Description declared, Supplier<? extends Store> opener) {
        this.description = Objects.requireNonNull(description, "description");
        this.type = declared.type();
        this.opener = Objects.requireNonNull(opener, "opener");
        Set<Class<?>> capabilities = declared.capabilities();
        for (Class<?> c : capabilities) {
            if (!CAPABILITIES.contains(c)) {
                throw new IllegalArgumentException("not a store capability: " + c.getName() + " (expected some of "
                        + "AtomicRecording, TrialClaims, AtomicTransitions, TransitionFeed)");
            }
        }
        this.declared = capabilities;
    }

    /** The class of the store this one connects to, known before it does. */
    Class<? extends Store> type() {
        return type;
    }

    // ------------------------------------------------------------------------------------ connecting

    private Connected store() {
        Connected c = connected;
        return c != null ? c : awaitConnection();
    }

    /** The real store, after waiting for the first attempt if it is under way; throws while not connected. */
    private Connected awaitConnection() {
        synchronized (lock) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FIRST_WAIT_MILLIS);
            while (true) {
                if (closed) {
                    throw closedError();
                }
                Connected c = connected;
                if (c != null) {
                    return c;
                }
                startConnector();
                long left = deadline - System.nanoTime();
                if (firstAttemptDone || left <= 0) {
                    throw notConnected();
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new StoreException("interrupted while waiting for store " + description + " to connect", e);
                }
            }
        }
    }

    /** Starts the connector thread unless it runs or the store is connected or closed. Holds the lock. */
    private void startConnector() {
        if (connector != null || connected != null || closed) {
            return;
        }
        Thread t = new Thread(this::connectLoop, "redeye-connect-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        connector = t;
        t.start();
    }

    private void connectLoop() {
        long backoff = FIRST_BACKOFF_MILLIS;
        while (true) {
            Connected c = null;
            Throwable failure = null;
            try {
                c = open();
            } catch (VirtualMachineError e) {
                synchronized (lock) {
                    connector = null;
                    firstAttemptDone = true;
                    lastError = e;
                    lock.notifyAll();
                }
                throw e;
            } catch (Throwable e) { // a provider's failure of any kind is the store's: calls keep failing
                failure = e;
            }
            int failures;
            synchronized (lock) {
                firstAttemptDone = true;
                if (closed) {
                    connector = null;
                    lock.notifyAll();
                    if (c != null) {
                        closeQuietly(c.store);
                    }
                    return;
                }
                if (c != null) {
                    connected = c;
                } else {
                    failedAttempts++;
                    lastError = failure;
                }
                failures = failedAttempts;
                lock.notifyAll();
            }
            if (c != null) {
                if (failures > 0) {
                    LOG.info("redeye: store {} connected after {} failed attempt(s)", description, failures);
                } else {
                    LOG.debug("redeye: store {} connected", description);
                }
                startHeld(backoff);
                return;
            }
            if (failures == 1) {
                LOG.warn("redeye: store {} cannot be reached yet ({}); calls fail as store errors, handled under "
                        + "each breaker's store error policy, while it retries in the background", description,
                        failure.toString());
            } else {
                LOG.debug("redeye: store {} still cannot be reached (attempt {}): {}", description, failures,
                        failure.toString());
            }
            if (!pause(backoff)) {
                return;
            }
            backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
        }
    }

    /** The provider's store, checked to offer every declared capability. */
    private Connected open() {
        Store s = opener.get();
        if (s == null) {
            throw new StoreException("the provider of " + description + " opened null");
        }
        if (!type.isInstance(s)) {
            closeQuietly(s);
            throw new StoreException("store " + description + " was declared as a " + type.getName() + " but its "
                    + "provider opened a " + s.getClass().getName());
        }
        try {
            Connected c = new Connected(s, s.capability(AtomicRecording.class).orElse(null),
                    s.capability(TrialClaims.class).orElse(null), s.capability(AtomicTransitions.class).orElse(null),
                    s.capability(TransitionFeed.class).orElse(null));
            for (Class<?> type : declared) {
                if (c.store.capability(type).isEmpty()) {
                    throw new StoreException("store " + description + " was declared with " + type.getSimpleName()
                            + " but the store its provider opened (" + s.getClass().getName() + ") lacks it");
                }
            }
            return c;
        } catch (Throwable e) { // whatever the store's capability() throws: the client it opened goes
            closeQuietly(s);
            throw e;
        }
    }

    /**
     * Starts every held subscription on the real store, retrying with backoff those it refuses; returns when
     * none is held or the store is closed. Runs on the connector thread, which ends with it.
     */
    private void startHeld(long backoff) {
        while (true) {
            List<Held> toStart;
            synchronized (lock) {
                if (closed || held.isEmpty()) {
                    connector = null;
                    return;
                }
                toStart = new ArrayList<>(held);
            }
            boolean refused = false;
            for (Held h : toStart) {
                refused |= !h.start(connected.feed);
            }
            if (refused && !pause(backoff)) {
                return;
            }
            backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
        }
    }

    /** Sleeps {@code millis} ±20%; false if the store was closed meanwhile (the connector then ends). */
    private boolean pause(long millis) {
        long jittered = (long) (millis * (0.8 + 0.4 * ThreadLocalRandom.current().nextDouble()));
        synchronized (lock) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(jittered);
            while (!closed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return true;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    // only close() interrupts this thread; the loop sees closed
                }
            }
            connector = null;
            return false;
        }
    }

    private StoreException notConnected() {
        Throwable last = lastError;
        if (last == null) {
            return new StoreException("store " + description + " is not connected yet (still connecting)");
        }
        return new StoreException("store " + description + " is not connected (" + failedAttempts + " failed "
                + "attempt(s), retrying in the background): " + last.getMessage(), last);
    }

    private StoreException closedError() {
        return new StoreException("store " + description + " is closed");
    }

    /**
     * A subscription returned before the real store took it: it delivers nothing until it is live, which the
     * engine waits for before it trusts the feed (its local cache).
     */
    interface Pending extends Subscription {
        /**
         * Runs {@code onLive} once the subscription runs on the real store (after its {@code onGap}), at once if
         * it already does; never if it is closed first. {@code onLive} runs on the connector thread and must not
         * throw.
         */
        void whenLive(Runnable onLive);
    }

    /** A subscription made before the real store could take it. */
    private final class Held implements Pending {
        private final Consumer<TransitionEvent> listener;
        private final Runnable onGap;
        // guarded by lock
        private Subscription real;
        private boolean cancelled;
        private boolean live;
        private Runnable onLive;

        Held(Consumer<TransitionEvent> listener, Runnable onGap) {
            this.listener = listener;
            this.onGap = onGap;
        }

        /** Starts it on {@code feed}; false if the feed refused it (it stays held). */
        boolean start(TransitionFeed feed) {
            Subscription s;
            try {
                s = feed.subscribe(listener, onGap);
            } catch (Throwable e) { // whatever the store throws but a VirtualMachineError: retried
                LOG.debug("redeye: store {} refused a held feed subscription; retrying: {}", description,
                        StoreErrors.storeError(e).toString());
                return false;
            }
            boolean keep;
            synchronized (lock) {
                keep = !cancelled && !closed;
                if (keep) {
                    real = s;
                    held.remove(this);
                }
            }
            if (!keep) {
                try {
                    s.close();
                } catch (Throwable e) {
                    LOG.debug("redeye: closing a feed subscription of store {} failed", description,
                            StoreErrors.storeError(e));
                }
                return true;
            }
            try {
                onGap.run(); // what happened before the subscription started is unknown to the subscriber
            } catch (Throwable e) {
                LOG.warn("redeye: a feed subscriber's onGap threw", StoreErrors.storeError(e));
            }
            Runnable then;
            synchronized (lock) {
                live = true;
                then = onLive;
                onLive = null;
            }
            if (then != null) {
                then.run();
            }
            return true;
        }

        @Override
        public void whenLive(Runnable then) {
            Objects.requireNonNull(then, "onLive");
            synchronized (lock) {
                if (cancelled) {
                    return;
                }
                if (!live) {
                    onLive = then;
                    return;
                }
            }
            then.run();
        }

        @Override
        public void close() {
            Subscription s;
            synchronized (lock) {
                cancelled = true;
                onLive = null;
                held.remove(this);
                s = real;
                real = null;
            }
            if (s != null) {
                s.close();
            }
        }
    }

    // ------------------------------------------------------------------------------------ the SPI

    @Override
    public <C> Optional<C> capability(Class<C> type) {
        if (CAPABILITIES.contains(type)) {
            return declared.contains(type) ? Optional.of(type.cast(this)) : Optional.empty();
        }
        Connected c = connected;
        return c == null ? Optional.empty() : c.store.capability(type);
    }

    private <C> C need(C capability, Class<C> type) {
        if (!declared.contains(type)) {
            throw new UnsupportedOperationException("store " + description + " does not offer " + type.getSimpleName());
        }
        return capability;
    }

    @Override
    public Optional<BreakerState> get(String key) {
        return store().store.get(key);
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        store().store.put(key, state, ttl);
    }

    @Override
    public void delete(String key) {
        store().store.delete(key);
    }

    @Override
    public StateChange recordFailure(String key, Policy policy, long now) {
        return need(store().recording, AtomicRecording.class).recordFailure(key, policy, now);
    }

    @Override
    public StateChange recordSuccess(String key, Policy policy, long now) {
        return need(store().recording, AtomicRecording.class).recordSuccess(key, policy, now);
    }

    @Override
    public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
        return need(store().recording, AtomicRecording.class).recordOutcome(key, success, policy, now);
    }

    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        return need(store().claims, TrialClaims.class).claimTrial(key, permits, ttl);
    }

    @Override
    public void releaseTrial(String key, String token) {
        need(store().claims, TrialClaims.class).releaseTrial(key, token);
    }

    @Override
    public StateChange trialSucceeded(String key, long trialVersion, Policy policy, long now) {
        return need(store().transitions, AtomicTransitions.class).trialSucceeded(key, trialVersion, policy, now);
    }

    @Override
    public StateChange trialFailed(String key, long trialVersion, Policy policy, long now) {
        return need(store().transitions, AtomicTransitions.class).trialFailed(key, trialVersion, policy, now);
    }

    @Override
    public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
        return need(store().transitions, AtomicTransitions.class).force(key, status, policy, now);
    }

    /**
     * Subscribes on the real store when connected; else holds the subscription until it connects (see the
     * class comment) and returns at once.
     *
     * @throws StoreException if the store is closed, or the connected store refuses
     */
    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(onGap, "onGap");
        need(null, TransitionFeed.class);
        Connected c;
        try {
            c = store();
        } catch (StoreException notYet) {
            synchronized (lock) {
                if (closed) {
                    throw closedError();
                }
                if (connected == null) {
                    Held h = new Held(listener, onGap);
                    held.add(h);
                    startConnector();
                    return h;
                }
                c = connected;
            }
        }
        return c.feed.subscribe(listener, onGap);
    }

    @Override
    public void close() {
        Connected c;
        Thread t;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            c = connected;
            t = connector;
            held.clear();
            lock.notifyAll();
        }
        if (t != null) {
            t.interrupt();
        }
        if (c != null) {
            c.store.close();
        }
    }

    private static void closeQuietly(Store s) {
        try {
            s.close();
        } catch (Throwable e) {
            LOG.debug("redeye: closing a store failed", StoreErrors.storeError(e));
        }
    }

    @Override
    public String toString() {
        Connected c = connected;
        return "ConnectingStore[" + type.getSimpleName() + " " + description + ", "
                + (c != null ? "connected: " + c.store : "not connected") + "]";
    }
}
