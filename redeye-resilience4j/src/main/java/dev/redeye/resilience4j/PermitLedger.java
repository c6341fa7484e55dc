package dev.redeye.resilience4j;

import dev.redeye.PermitSlot;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;

/**
 * The redeye permits acquired through one adapter and not completed yet, held in reusable
 * {@link PermitSlot}s so that a call acquired and completed on one thread allocates nothing.
 *
 * <p>Resilience4j's interface does not hand the caller a permit: {@code acquirePermission()} returns nothing and
 * {@code onSuccess}/{@code onError}/{@code releasePermission} name no call. So the adapter keeps each permit
 * here and a completion takes one back:
 * <ol>
 * <li>the newest permit acquired <b>on the completing thread</b> and still outstanding (a synchronous call, and
 * nested calls, complete in the reverse order they were acquired, on the thread that acquired them);</li>
 * <li>otherwise, the <b>oldest</b> outstanding permit of any thread: a call acquired on one thread and completed
 * on another (a {@code CompletionStage} completing on a pool thread, a Reactor signal on another scheduler).</li>
 * </ol>
 * Each acquisition is completed once: a slot's {@link Slot#stamp stamp} is the acquisition's sequence number while
 * it holds a permit, and a completion first wins it by a compare-and-set from that exact number, so two
 * completions never complete one acquisition, every completion completes at most one, and a completion aimed at
 * an acquisition that is already over never completes the slot's next one. When two calls of one name are in
 * flight and one completes on a thread that did not acquire it while the other's thread is still running, their
 * permits may be swapped: each outcome is still recorded exactly once, but a slow call's time or a trial's claim
 * is attributed to the other call. Finding the oldest permit scans every slot (about as many as calls were ever in
 * flight at once through this adapter); the same-thread case reads only the thread's own stack.
 *
 * <p>Outstanding permits are bounded ({@link #MAX_OUTSTANDING}): a caller that acquires and never completes (an
 * {@code Error} thrown past a Resilience4j decorator, which only catches {@code Exception}s) would otherwise grow
 * the ledger forever. Past the bound the oldest permit is released (recording nothing) and its slot reused.
 */
final class PermitLedger {
    /** Past this many outstanding permits, the oldest is released unused. */
    static final int MAX_OUTSTANDING = 100_000;

    /** A slot's stamp while no permit is held and nobody is acquiring into it. */
    private static final long FREE = 0L;
    /** A slot's stamp while its claimer acquires into it or completes it. */
    private static final long BUSY = -1L;

    /** How a completion ends the permit it takes. */
    enum Completion { SUCCESS, RESULT, FAILURE, RELEASE }

    /** A reusable permit and the acquisition it holds. */
    static final class Slot {
        private static final AtomicLongFieldUpdater<Slot> STAMP =
                AtomicLongFieldUpdater.newUpdater(Slot.class, "stamp");
        final PermitSlot permit;
        /** Where the slot is in its ledger's {@link #slots}. */
        final int index;
        /** {@link #FREE}, {@link #BUSY}, or the sequence number of the acquisition held (positive). */
        volatile long stamp;

        Slot(PermitSlot permit, int index) {
            this.permit = permit;
            this.index = index;
        }

        boolean win(long expected) {
            return STAMP.compareAndSet(this, expected, BUSY);
        }

        /**
         * Ends the claim with {@code next} (FREE, or the acquisition's stamp): a release store, enough because a
         * completion on another thread happens after the acquisition it completes.
         */
        void stamp(long next) {
            STAMP.lazySet(this, next);
        }
    }

    /**
     * One thread's acquisitions, newest last: slot index and sequence number, checked against the slot's stamp.
     * Indices, not slots: a thread-local's value outlives its ledger until the thread expunges it, and must not
     * keep the slots (and the breaker their permits hold) reachable meanwhile.
     */
    private static final class Stack {
        int cached = -1;
        int[] slots = new int[4];
        long[] stamps = new long[4];
        int depth;

        void push(int slot, long stamp) {
            if (depth == slots.length) {
                slots = java.util.Arrays.copyOf(slots, depth * 2);
                stamps = java.util.Arrays.copyOf(stamps, depth * 2);
            }
            slots[depth] = slot;
            stamps[depth++] = stamp;
        }
    }

    private final dev.redeye.CircuitBreaker breaker;
    private final String operation;
    private final int maxOutstanding;
    private final AtomicLong sequence = new AtomicLong();
    private final ThreadLocal<Stack> stacks = ThreadLocal.withInitial(Stack::new);
    private final Object growLock = new Object();
    /** Every slot made, in order; nulls past the last. Grown (doubled) under {@link #growLock}. */
    private volatile Slot[] slots = new Slot[8];
    private int made;

    PermitLedger(dev.redeye.CircuitBreaker breaker, String operation) {
        this(breaker, operation, MAX_OUTSTANDING);
    }

    /** A ledger releasing its oldest permit past {@code maxOutstanding} (tests use a small bound). */
    PermitLedger(dev.redeye.CircuitBreaker breaker, String operation, int maxOutstanding) {
        this.breaker = breaker;
        this.operation = operation;
        this.maxOutstanding = maxOutstanding;
    }

    /**
     * Asks redeye for a permit and keeps it: the slot holding it, or redeye's rejection
     * ({@code CircuitOpenException}, or {@code StoreUnavailableException} under REJECT).
     */
    Object acquire() {
        Stack mine = stacks.get();
        Slot[] all = slots;
        Slot s = mine.cached >= 0 ? all[mine.cached] : null;
        if (s == null || !s.win(FREE)) {
            s = claim();
            mine.cached = s.index;
        }
        boolean permitted;
        try {
            permitted = s.permit.tryAcquire();
        } catch (RuntimeException | Error e) {
            s.stamp = FREE;
            throw e;
        }
        if (!permitted) {
            RuntimeException rejection = s.permit.rejection();
            s.stamp = FREE;
            return rejection;
        }
        long stamp = sequence.incrementAndGet();
        s.stamp(stamp);
        if (mine.depth == mine.slots.length) {
            prune(mine);
        }
        mine.push(s.index, stamp);
        return s;
    }

    /** A slot won from FREE to BUSY: an unused one, a new one, or past the bound the oldest held one, released. */
    private Slot claim() {
        for (Slot s : slots) {
            if (s != null && s.stamp == FREE && s.win(FREE)) {
                return s;
            }
        }
        synchronized (growLock) {
            if (made >= maxOutstanding) {
                Slot oldest = takeOldest();
                if (oldest != null) {
                    oldest.permit.release();
                    return oldest;
                }
            }
            Slot s = new Slot(breaker.newPermitSlot(operation), made);
            s.stamp = BUSY;
            Slot[] all = slots;
            if (made == all.length) {
                all = java.util.Arrays.copyOf(all, made * 2);
            }
            all[made++] = s;
            slots = all;
            return s;
        }
    }

    /**
     * Completes the permit a completion on this thread is for (see the class comment) as {@code how} says;
     * {@code argument} is the result ({@link Completion#RESULT}) or the error ({@link Completion#FAILURE}).
     *
     * @return false when no permit is outstanding (an outcome reported without {@code acquirePermission})
     */
    boolean complete(Completion how, Object argument) {
        Slot s = takeMine();
        if (s == null) {
            s = takeOldest();
            if (s == null) {
                return false;
            }
        }
        try {
            switch (how) {
                case SUCCESS:
                    s.permit.onSuccess();
                    break;
                case RESULT:
                    s.permit.onResult(argument);
                    break;
                case FAILURE:
                    s.permit.onFailure((Throwable) argument);
                    break;
                default:
                    s.permit.release();
            }
        } finally {
            s.stamp(FREE);
        }
        return true;
    }

    /** This thread's newest acquisition still outstanding, won (BUSY); null if none. */
    private Slot takeMine() {
        Stack mine = stacks.get();
        Slot[] all = slots;
        while (mine.depth > 0) {
            int i = --mine.depth;
            Slot s = all[mine.slots[i]];
            if (s.win(mine.stamps[i])) {
                return s;
            }
        }
        return null;
    }

    /** Drops from {@code mine} the acquisitions other threads completed. */
    private void prune(Stack mine) {
        Slot[] all = slots;
        int kept = 0;
        for (int i = 0; i < mine.depth; i++) {
            if (all[mine.slots[i]].stamp == mine.stamps[i]) {
                mine.slots[kept] = mine.slots[i];
                mine.stamps[kept++] = mine.stamps[i];
            }
        }
        mine.depth = kept;
    }

    /** The oldest outstanding acquisition of any thread, won (BUSY); null if none. */
    private Slot takeOldest() {
        while (true) {
            Slot oldest = null;
            long min = Long.MAX_VALUE;
            for (Slot s : slots) {
                if (s == null) {
                    break;
                }
                long st = s.stamp;
                if (st > 0 && st < min) {
                    min = st;
                    oldest = s;
                }
            }
            if (oldest == null) {
                return null;
            }
            if (oldest.win(min)) {
                return oldest;
            }
        }
    }

    /** How many permits are outstanding (approximately, under concurrency). */
    int outstanding() {
        int n = 0;
        for (Slot s : slots) {
            if (s != null && s.stamp > 0) {
                n++;
            }
        }
        return n;
    }
}
