package dev.redeye.cli;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.LongAdder;

/**
 * Sorts, for the simulation, the failures that normal calls record through one instance's store client, by
 * where each lands in the stored history: before the breaker's first opening (the last of these opened it), or
 * after it, which means the call was admitted before the opening was stored and was still running when it was:
 * <b>in flight at the opening</b>. Every normal call that reaches the dead dependency records exactly one
 * failure (a trial records its own through {@code trialFailed}, which is not counted here), so the two, and
 * the failures whose write failed (a store error: nobody knows where they would have landed), add up to the
 * normal calls that reached it.
 *
 * <p>Where a failure lands is read from the store's answer, not from the clock: the state its write found
 * carries the version, and versions only grow, so a failure whose write found a version below the one the
 * first opening wrote came before it. (A failure written later on a closed state, after a trial closed the
 * breaker again, is still one of a call admitted before the opening: a slow store can land so many of them
 * there that they open it a second time.)
 *
 * <p>It also tells a call in flight from one admitted late: each thread's last read (the gate's read that
 * admitted its call) is stamped when it starts, and the first opening when its write returns. A call in
 * flight whose admitting read started after that was admitted from a state the store should no longer have
 * served; a read that started before may have been served before the opening was committed, which is a race
 * every distributed breaker has, not a late admission.
 *
 * <p>Sits between the counting store and the instance's client; forwards everything and declares what the
 * client declares. Thread-safe; a few nanoseconds per store operation, one small record per failure.
 */
final class OpeningProbe extends ForwardingStore {
    /** When each thread's last read started ({@link System#nanoTime()}). */
    private static final ThreadLocal<long[]> READ_STARTED = ThreadLocal.withInitial(() -> new long[1]);

    /**
     * The failures of one breaker state (one for the fleet in shared mode, one per instance otherwise) and its
     * first opening; classified once the run is over ({@link #figures()}).
     */
    static final class Opening {
        private final ConcurrentLinkedQueue<long[]> failures = new ConcurrentLinkedQueue<>();
        private final LongAdder notRecorded = new LongAdder();
        private volatile long openedVersion = Long.MAX_VALUE;
        private volatile long openedAt = Long.MAX_VALUE;

        private synchronized void opened(long version, long at) {
            if (openedVersion == Long.MAX_VALUE) {
                openedVersion = version;
                openedAt = at;
            }
        }

        /**
         * {@code {before the opening, in flight at it, of which admitted after it, of which recorded after the
         * breaker had closed again, not recorded}}; after the run.
         */
        long[] figures() {
            long before = 0;
            long inFlight = 0;
            long late = 0;
            long afterClose = 0;
            for (long[] f : failures) {
                if (f[0] < openedVersion) {
                    before++;
                } else {
                    inFlight++;
                    if (f[1] > openedAt) {
                        late++;
                    }
                    if (f[2] == 0) {
                        afterClose++;
                    }
                }
            }
            return new long[] {before, inFlight, late, afterClose, notRecorded.sum()};
        }
    }

    private final Opening opening;

    /**
     * @param delegate the instance's store client
     * @param opening  where this breaker state's failures go
     */
    OpeningProbe(Store delegate, Opening opening) {
        super(delegate);
        this.opening = Objects.requireNonNull(opening, "opening");
    }

    @Override
    public Optional<BreakerState> get(String key) {
        READ_STARTED.get()[0] = System.nanoTime();
        return super.get(key);
    }

    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        AtomicOperation.Kind kind = operation.kind();
        if (kind != AtomicOperation.Kind.FAILURE && kind != AtomicOperation.Kind.SUCCESS) {
            return super.apply(key, operation, policy, now);
        }
        StateChange ch = null;
        try {
            ch = super.apply(key, operation, policy, now);
            return ch;
        } finally {
            note(kind == AtomicOperation.Kind.SUCCESS, ch);
        }
    }

    /** One outcome write; {@code ch} is null when the store failed it. */
    private void note(boolean success, StateChange ch) {
        if (ch == null) {
            if (!success) {
                opening.notRecorded.increment();
            }
            return;
        }
        if (ch.transition() == TransitionKind.OPENED) {
            opening.opened(ch.state().version(), System.nanoTime());
        }
        if (!success) {
            opening.failures.add(new long[] {ch.previous().version(), READ_STARTED.get()[0],
                ch.previous().open() ? 1 : 0});
        }
    }
}
