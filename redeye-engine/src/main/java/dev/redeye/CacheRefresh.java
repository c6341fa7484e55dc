package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Single-flight refresh of the local cache: when an operation's cached state cannot serve a call (it is older
 * than the stale tolerance, distrusted after a feed gap, or missing), one caller, the leader, reads the store;
 * the callers that arrive while that read is in flight wait for its result instead of reading themselves.
 * So a stale window costs one store read however many threads call, and no caller is ever served an entry
 * older than the stale tolerance: they wait for the fresh one.
 *
 * <h2>Rules</h2>
 * <ul>
 * <li>The leader reads, records what it read in the {@link StateViews} (as any read does), then hands the
 * same state to its waiters. Each waiter is admitted on that state exactly as the leader is (a closed state
 * runs the call; an open one goes to {@link Trials}, which rejects before eligibility with no store call).</li>
 * <li>A waiter waits at most the stale tolerance (capped at 5 s, like the cache), counted from the start of
 * the leader's read by the breaker's ticker (and blocking for at most that long in real time): a result it
 * takes is never older than what the cache itself would serve.</li>
 * <li>The leader's read fails: every waiter gets the same error and is admitted per the store error policy
 * (REJECT: {@code StoreUnavailableException}; ALLOW and LOCAL: the call runs, nothing being known). The error
 * is one store error, reported once (metric, log, {@code onStoreError}), not once per waiter; the waiters
 * never retry it on their own, so a failing store sees one read per stale window, not one per caller.</li>
 * <li>The leader's read takes longer than the wait bound: its waiters stop waiting and are admitted per the
 * store error policy, as if the read had failed (reported once per read, as a {@link StoreException} saying
 * so); and the read is overdue, so the next caller leads a new one. A hung store thus costs one read per
 * stale tolerance and holds each caller at most that long before the policy decides; a slow one under ALLOW
 * lets calls run rather than stack them up behind it.</li>
 * <li>A waiter interrupted while it waits stops waiting, restores its interrupt status and reads the store
 * itself, as every caller did before reads were coalesced.</li>
 * <li>Only closed-path reads under an active local cache are coalesced. A known open state keeps its own
 * single-flight re-verification ({@link Gate}); without the local cache every call reads the store.</li>
 * </ul>
 *
 * <p>The healthy cached path never comes here. The leader allocates its flight (a small object with a latch);
 * the operation keeps it only while the read is in flight.
 */
final class CacheRefresh {
    private final Monotonic time;
    private final StoreAccess access;
    private final StateViews views;
    private final StoreErrors errors;
    private final StateViews.StoreCall<BreakerState> read;

    CacheRefresh(Monotonic time, StoreAccess access, StateViews views, StoreErrors errors) {
        this.time = time;
        this.access = access;
        this.views = views;
        this.errors = errors;
        this.read = (e, now) -> access.get(e.name);
    }

    /** Whether the gate's next closed-path read of an operation should come here: the local cache serves. */
    boolean coalesces() {
        return views.caching();
    }

    /**
     * The state of {@code e}, read by this caller as the leader or by the leader it waited for; or null when
     * the views changed while this caller looked (a read completed meanwhile): the caller admits again from
     * them.
     *
     * @throws StoreException the read failed or did not answer in time (already reported)
     */
    BreakerState read(OperationState e, long tick) {
        Flight f = e.refresh;
        if (f != null && !f.isDone()) {
            long wait = f.startNanos + views.cacheMaxAgeNanos() - tick;
            if (wait > 0 && !f.overdue()) {
                return follow(e, f, wait);
            }
            // overdue (by local time, or a waiter already waited the bound out): lead a new read in its place
        } else {
            // No read in flight; one may have ended after this caller looked at the views, and its result
            // would be there. Look once more before reading.
            if (views.cachedClosed(e, tick) != null || e.openView.get() != null) {
                return null;
            }
        }
        Flight mine = new Flight(tick);
        if (!e.casRefresh(f, mine)) {
            return null; // another caller leads meanwhile: admit again, then wait for it
        }
        return lead(e, mine, tick);
    }

    private BreakerState lead(OperationState e, Flight mine, long tick) {
        try {
            BreakerState s = readAndNote(e, tick);
            mine.complete(s, null);
            return s;
        } catch (StoreException ex) {
            mine.complete(null, ex);
            throw ex;
        } finally {
            if (!mine.isDone()) { // an Error escaped the read: release the waiters
                mine.complete(null, new StoreException("store read for the local cache did not complete"));
            }
            e.casRefresh(mine, null);
        }
    }

    /**
     * One read by this caller, recorded in the views; a failure is reported, then thrown. The gate's
     * uncoalesced reads (no local cache, or a known open state) come here too: one way to read and note.
     */
    BreakerState readAndNote(OperationState e, long tick) {
        try {
            return views.readNoted(e, tick, read);
        } catch (StoreException ex) {
            errors.report(e, ex);
            throw ex;
        }
    }

    /**
     * Waits for the leader's read. What remains of the bound is decided by local time; the wait itself is a
     * real one (a virtual ticker does not move while a thread blocks).
     */
    private BreakerState follow(OperationState e, Flight f, long waitNanos) {
        boolean done;
        try {
            done = f.done.await(waitNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return readAndNote(e, time.nanos()); // as without coalescing: this caller's own read
        }
        if (!done) {
            StoreException slow = new StoreException("store read for the local cache of '"
                    + OperationNames.abbreviate(e.name) + "' took longer than the stale tolerance ("
                    + views.cacheMaxAgeMillis() + " ms)");
            if (f.slowReported.compareAndSet(false, true)) {
                errors.report(e, slow);
            }
            throw slow;
        }
        if (f.error != null) {
            throw f.error;
        }
        return f.state;
    }

    /** One read in flight and, once done, its result: the state read or the read's error. */
    static final class Flight {
        /** When the read began, local ns. */
        final long startNanos;
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicBoolean slowReported = new AtomicBoolean();
        /** Written before {@link #done} opens, read after: the latch orders them. */
        private BreakerState state;
        private StoreException error;

        Flight(long startNanos) {
            this.startNanos = startNanos;
        }

        boolean isDone() {
            return done.getCount() == 0;
        }

        /** A waiter waited the whole bound (in real time) for this read: it is overdue whatever the ticker says. */
        boolean overdue() {
            return slowReported.get();
        }

        void complete(BreakerState s, StoreException ex) {
            state = s;
            error = ex;
            done.countDown();
        }
    }
}
