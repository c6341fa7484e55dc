package dev.redeye;

import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreProvider;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.support.ForwardingStore;
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
 * <li>A subscription made while not connected is held (a {@link HeldSubscription} one); the connector starts it on the
 * real store once connected, then runs its {@code onGap} (events of the time before are unknown to it). A held
 * subscription the real store refuses, whatever it throws, is retried with the same backoff.</li>
 * <li>Once connected, calls go straight to the real store (one volatile read more), whose own client deals
 * with later outages.</li>
 * </ul>
 *
 * <p>The marker capabilities {@link QuorumState} and {@link OutcomeBatches}, and {@link OperationListing}, are
 * declared when the class of the real store implements them (the provider's
 * {@link StoreProvider.Description#type()}), so that a breaker with a quorum or with record batching can be built
 * over a store that has not connected yet, and an operator's view finds the listing before the first call.
 *
 * <p>Thread-safe. {@link #close()} stops the connector (its attempt in progress finishes and its store, if
 * any, is closed) and closes the real store.
 */
final class ConnectingStore extends ForwardingStore implements QuorumState, OutcomeBatches {
    private static final Logger LOG = LoggerFactory.getLogger(Stores.class);
    static final long FIRST_BACKOFF_MILLIS = 100;
    static final long MAX_BACKOFF_MILLIS = 5_000;
    /** The longest a first use waits for the first attempt (a provider's own bounds are shorter). */
    static final long FIRST_WAIT_MILLIS = 10_000;
    private static final AtomicLong THREADS = new AtomicLong();
    /** The marker capabilities declared before connecting, from the real store's class. */
    private static final java.util.List<Class<?>> MARKERS = java.util.List.of(QuorumState.class,
            OutcomeBatches.class);
    /**
     * The capabilities of the SPI declared before connecting from the real store's class as well as from the
     * description: a provider's description lists those every store of it has, and these are known by type.
     */
    private static final java.util.List<Class<?>> BY_TYPE = java.util.List.of(OperationListing.class);

    private final String description;
    private final Class<? extends Store> type;
    private final Supplier<? extends Store> opener;
    private final Set<Class<?>> declared;
    private final Object lock = new Object();
    /** Null until connected; never null again after (until close, which keeps it for closing). */
    private volatile Store connected;

    // guarded by lock
    private boolean closed;
    private Thread connector;
    private boolean firstAttemptDone;
    private int failedAttempts;
    private Throwable lastError;
    private final List<HeldSubscription> held = new ArrayList<>();

    /**
     * @param description how messages and logs name the store (a redacted URI; never a password)
     * @param declared    the class of the real store and the capability interfaces to declare, a subset of the
     *                    SPI's ({@link ForwardingStore#CAPABILITIES})
     * @param opener      opens the real store, connected, or throws; called on the connector thread
     * @throws IllegalArgumentException if a capability is not one of the SPI's
     */
    ConnectingStore(String description, StoreProvider.Description declared, Supplier<? extends Store> opener) {
        this.description = Objects.requireNonNull(description, "description");
        this.type = declared.type();
        this.opener = Objects.requireNonNull(opener, "opener");
        Set<Class<?>> capabilities = declared.capabilities();
        for (Class<?> c : capabilities) {
            if (!CAPABILITIES.contains(c)) {
                throw new IllegalArgumentException("not a store capability: " + c.getName() + " (expected some of "
                        + CAPABILITIES.stream().map(Class::getSimpleName).toList() + ")");
            }
        }
        Set<Class<?>> all = new java.util.HashSet<>(capabilities);
        for (Class<?> c : BY_TYPE) {
            if (c.isAssignableFrom(type)) {
                all.add(c);
            }
        }
        this.declared = Set.copyOf(all);
    }

    /** The class of the store this one connects to, known before it does. */
    Class<? extends Store> type() {
        return type;
    }

    // ------------------------------------------------------------------------------------ connecting

    /** The real store, after waiting for the first attempt if it is under way; throws while not connected. */
    @Override
    protected Store delegate() {
        Store c = connected;
        return c != null ? c : awaitConnection();
    }

    private Store awaitConnection() {
        synchronized (lock) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FIRST_WAIT_MILLIS);
            while (true) {
                if (closed) {
                    throw closedError();
                }
                Store c = connected;
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
            Store c = null;
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
                        closeQuietly(c);
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
    private Store open() {
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
            for (Class<?> type : declared) {
                if (s.capability(type).isEmpty()) {
                    throw new StoreException("store " + description + " was declared with " + type.getSimpleName()
                            + " but the store its provider opened (" + s.getClass().getName() + ") lacks it");
                }
            }
            for (Class<?> marker : MARKERS) {
                if (marker.isAssignableFrom(type) && s.capability(marker).isEmpty()) {
                    throw new StoreException("store " + description + " was declared as a " + type.getName()
                            + ", which implements " + marker.getSimpleName() + ", but the store its provider opened "
                            + "lacks it");
                }
            }
            return s;
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
            List<HeldSubscription> toStart;
            synchronized (lock) {
                if (closed || held.isEmpty()) {
                    connector = null;
                    return;
                }
                toStart = new ArrayList<>(held);
            }
            boolean refused = false;
            for (HeldSubscription h : toStart) {
                refused |= !h.start(connected);
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

    // ------------------------------------------------------------------------------------ the SPI

    @Override
    protected boolean offers(Class<?> type) {
        return declared.contains(type);
    }

    /**
     * A capability type of the SPI as declared; any other type from the real store if connected; before that,
     * {@link QuorumState} and {@link OutcomeBatches} (markers) when the real store's class implements them, else
     * empty.
     */
    @Override
    public <C> Optional<C> capability(Class<C> type) {
        if (CAPABILITIES.contains(type)) {
            return super.capability(type);
        }
        Store c = connected;
        if (c != null) {
            return c.capability(type);
        }
        return MARKERS.contains(type) && type.isAssignableFrom(this.type)
                ? Optional.of(type.cast(this)) : Optional.empty();
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
        if (!offers(TransitionFeed.class)) {
            return super.subscribe(listener, onGap); // throws: not offered
        }
        try {
            delegate();
        } catch (StoreException notYet) {
            synchronized (lock) {
                if (closed) {
                    throw closedError();
                }
                if (connected == null) {
                    HeldSubscription h = new HeldSubscription(listener, onGap, lock, held, () -> closed,
                            description);
                    held.add(h);
                    startConnector();
                    return h;
                }
            }
        }
        return super.subscribe(listener, onGap);
    }

    @Override
    public void close() {
        Store c;
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
            c.close();
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
        Store c = connected;
        return "ConnectingStore[" + type.getSimpleName() + " " + description + ", "
                + (c != null ? "connected: " + c : "not connected") + "]";
    }
}
