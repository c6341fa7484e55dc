package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreOperation;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;

/**
 * The store as the engine uses it: each capability if the store has it, else the best-effort fallback
 * (get-then-put of the same rule). The missing capabilities are looked up once per breaker;
 * each logs one warning per store instance (the user's store object, remembered weakly), however many
 * breakers are built over it.
 *
 * <p>With observers registered (distributed mode), every store operation is timed and reported to them.
 *
 * <p>Every method reports any failure of the store as a {@link StoreException}: the store's own, or one
 * wrapping whatever else it threw (a driver's exception, a checked exception thrown sneakily, a closed pool's
 * {@link IllegalStateException}, a {@link NullPointerException}, a {@link NoClassDefFoundError}, a
 * {@code null} where a value was due): every {@code Throwable} but a {@link VirtualMachineError}
 * ({@link StoreErrors#isStoreError}). The engine handles store errors in one
 * place, under its policy, and never lets them pass for the protected call's failure.
 */
final class StoreAccess {
    final Store store;
    final AtomicUpdates updates;
    final TrialClaims claims;
    final TransitionFeed feed;
    /** Null in local mode: the in-process store is not timed. */
    private final Observers observers;
    private final Monotonic time;

    /** The stores whose missing capabilities were already reported, by identity, weakly held. */
    private static final List<Reported> REPORTED = new ArrayList<>();

    /** One store whose missing capabilities were reported; {@code feed}: the feed warning was given too. */
    private static final class Reported {
        final WeakReference<Object> store;
        boolean feed;

        Reported(Object store) {
            this.store = new WeakReference<>(store);
        }
    }

    /**
     * @param store     the store the engine talks to (possibly a decorator)
     * @param userStore the store the user configured: missing capabilities are reported once per such object
     * @param storeName what warnings call it: the user's store class, never a URI
     * @param observers told of every store operation; null not to time them
     * @param time      what store operations are timed with
     */
    StoreAccess(Store store, Object userStore, String storeName, Logger log, boolean localCacheRequested,
            Observers observers, Monotonic time) {
        this.store = store;
        this.observers = observers;
        this.time = time;
        this.updates = store.capability(AtomicUpdates.class).orElse(null);
        this.claims = store.capability(TrialClaims.class).orElse(null);
        this.feed = store.capability(TransitionFeed.class).orElse(null);
        boolean lacksFeed = feed == null && localCacheRequested;
        if (updates == null || claims == null || lacksFeed) {
            int what = toReport(userStore, lacksFeed);
            if ((what & CAPABILITIES) != 0) {
                warnMissing(log, storeName);
            }
            if ((what & FEED) != 0) {
                log.warn("store {} lacks TransitionFeed: the local cache is unavailable and every call reads the "
                        + "store", storeName);
            }
        }
    }

    private static final int CAPABILITIES = 1;
    private static final int FEED = 2;

    /** Which warnings about {@code userStore} are still due (and now counted as given). */
    private static int toReport(Object userStore, boolean lacksFeed) {
        synchronized (REPORTED) {
            Reported found = null;
            for (Iterator<Reported> it = REPORTED.iterator(); it.hasNext(); ) {
                Reported r = it.next();
                Object s = r.store.get();
                if (s == null) {
                    it.remove(); // a store that was collected: forget it
                } else if (s == userStore) {
                    found = r;
                }
            }
            int what = 0;
            if (found == null) {
                found = new Reported(userStore);
                REPORTED.add(found);
                what = CAPABILITIES;
            }
            if (lacksFeed && !found.feed) {
                found.feed = true;
                what |= FEED;
            }
            return what;
        }
    }

    private void warnMissing(Logger log, String storeName) {
        if (updates == null) {
            log.warn("store {} lacks AtomicUpdates: outcomes, trial outcomes and forced changes are written with "
                    + "get-then-put, so failure counts and transitions may be lost under concurrency", storeName);
        }
        if (claims == null) {
            log.warn("store {} lacks TrialClaims: half-open trials are claimed per instance, so each instance may "
                    + "run its own trials at the same time", storeName);
        }
    }

    /** The stored state, or {@link BreakerState#INITIAL} if none. */
    BreakerState get(String op) {
        long t0 = startTiming();
        boolean failed = true;
        try {
            Optional<BreakerState> s = store.get(op);
            BreakerState out = s.orElse(BreakerState.INITIAL); // a null Optional is a store error like any other
            failed = false;
            return out;
        } catch (Throwable e) { // also a checked exception a driver threw sneakily, or a LinkageError
            throw storeError("get", e);
        } finally {
            timed(StoreOperation.GET, failed, t0);
        }
    }

    /** Records the outcome of a trial admitted under the open period {@code trialVersion}. */
    StateChange trialOutcome(String op, long trialVersion, boolean success, Policy p, long now) {
        return update(op, success ? AtomicOperation.trialSucceeded(trialVersion)
                : AtomicOperation.trialFailed(trialVersion), p, now);
    }

    /** An operator's change to {@code target}. */
    StateChange force(String op, BreakerStatus target, Policy p, long now) {
        return update(op, AtomicOperation.force(target), p, now);
    }

    /**
     * Applies {@code operation}: {@link AtomicUpdates#apply} if the store has it, else the best-effort
     * fallback, get-then-put of the same rule (and, for an operation that removes claims, a delete first, which
     * removes the stored claims too).
     */
    StateChange update(String op, AtomicOperation operation, Policy p, long now) {
        long t0 = startTiming();
        boolean failed = true;
        try {
            StateChange ch;
            if (updates != null) {
                ch = updates.apply(op, operation, p, now);
                if (ch == null) {
                    throw new StoreException("apply returned null");
                }
            } else {
                ch = operation.apply(store.get(op).orElse(null), p, now);
                if (operation.removesClaims()) {
                    store.delete(op);
                }
                if (ch.changed()) {
                    store.put(op, ch.state(), p.stateTtl());
                }
            }
            failed = false;
            return ch;
        } catch (Throwable e) {
            throw storeError("apply (" + operation.kind().method() + ")", e);
        } finally {
            timed(StoreOperation.UPDATE, failed, t0);
        }
    }

    /** A trial token, or null if every permit is taken. Only for a store with {@link TrialClaims}. */
    String claim(String op, int permits, Duration ttl) {
        long t0 = startTiming();
        boolean failed = true;
        try {
            String token = claims.claimTrial(op, permits, ttl).orElse(null);
            failed = false;
            return token;
        } catch (Throwable e) {
            throw storeError("claimTrial", e);
        } finally {
            timed(StoreOperation.CLAIM_TRIAL, failed, t0);
        }
    }

    void release(String op, String token) {
        long t0 = startTiming();
        boolean failed = true;
        try {
            claims.releaseTrial(op, token);
            failed = false;
        } catch (Throwable e) {
            throw storeError("releaseTrial", e);
        } finally {
            timed(StoreOperation.RELEASE_TRIAL, failed, t0);
        }
    }

    TransitionFeed.Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        long t0 = startTiming();
        boolean failed = true;
        try {
            TransitionFeed.Subscription sub = feed.subscribe(listener, onGap);
            failed = false;
            return sub;
        } catch (Throwable e) {
            throw storeError("subscribe", e);
        } finally {
            timed(StoreOperation.SUBSCRIBE, failed, t0);
        }
    }

    private static final long NOT_TIMED = Long.MIN_VALUE;

    /** The start of a timed store operation, or {@link #NOT_TIMED} without observers (no clock read). */
    private long startTiming() {
        Observers obs = observers;
        return obs != null && obs.current() != null ? time.nanos() : NOT_TIMED;
    }

    private void timed(StoreOperation op, boolean failed, long t0) {
        if (t0 != NOT_TIMED) {
            Observers.Set o = observers.current();
            if (o != null) {
                o.storeOperation(op, failed, time.nanos() - t0);
            }
        }
    }

    /**
     * The store's own exception as it is; any other store error ({@link StoreErrors#isStoreError}: a driver's
     * exception, a checked one thrown sneakily, a {@link LinkageError}) wrapped, naming the method.
     *
     * @throws VirtualMachineError if {@code e} is one: it is the JVM's failure, not the store's
     */
    static StoreException storeError(String method, Throwable e) {
        if (StoreErrors.storeError(e) instanceof StoreException) {
            return (StoreException) e;
        }
        return new StoreException("store " + method + " failed: " + e, e);
    }
}
