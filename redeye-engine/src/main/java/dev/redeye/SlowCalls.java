package dev.redeye;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import java.lang.ref.WeakReference;
import java.time.Clock;
import java.util.Iterator;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Slow calls judged while they run ({@code slowCallDurationThreshold}, sliding-window strategy). Every admitted
 * call that is not a trial runs under a {@link Watch}; one daemon thread per breaker ("redeye-slow-calls", no
 * thread per call, started with the first watched call and stopped by {@link #close()}) sweeps the watches of
 * the calls in flight every {@link #sweepPeriodNanos(long) eighth of the threshold} (at least 1 ms, at most
 * 250 ms) and judges each by the breaker's ticker. A call still running at the sweep after its deadline is
 * counted there and then as a slow success ({@link AtomicOperation#slowCall()}), which returns where in the window
 * it went; when the call then ends, a success writes nothing more and a failure marks that slot failed
 * ({@link AtomicOperation#slowCallFailed}, fenced by the version), so the call is counted once. A call that ends
 * before a sweep found it past its deadline is recorded when it ends, as slow if it took at least the threshold.
 * A call that ends in an interrupt or a cancellation (not recorded, see {@link OutcomeRecorder}) records nothing
 * more; if a sweep had already counted it, it stays counted as a slow success: it did run that long.
 *
 * <p>Each watched call's two ends (the sweep that finds it past its deadline, and its completion) meet in one
 * compare-and-set on the watch's {@link Watch#state state}: whichever comes second does what is left, so a
 * completion racing the deadline's write neither waits for the store nor is lost. The deadline's writes run on
 * the sweeping thread; a store error there is reported like any outcome write's, and the call is then recorded
 * when it ends, as if no deadline had passed.
 *
 * <h2>Nothing allocated per call</h2>
 * A thread's calls reuse the thread's own watch: one that ended is free again once its last writer is done with
 * it, and its state carries a generation so that a sweep that read an earlier call's state can never act on the
 * next one. A call that finds its thread's watch in use (a call nested in another, or an asynchronous call not
 * ended yet) gets a watch of its own for its duration. The sweep reads the per-thread watches (held weakly: a
 * thread that ends takes its watch with it) and the watches in use.
 */
final class SlowCalls implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);

    /** A watch with no call: free for its thread's next call. */
    private static final int FREE = 0;
    private static final int RUNNING = 1;
    /** The deadline passed and its write is under way. */
    private static final int RECORDING = 2;
    /** The deadline's write counted the call in the window: {@link Watch#slot} and {@link Watch#version} say where. */
    private static final int COUNTED = 3;
    /** The deadline's write did not count it (open, disabled, another strategy, a store error). */
    private static final int NOT_COUNTED = 4;
    /** Ended before its deadline. */
    private static final int ENDED = 5;
    private static final int ENDED_OK_WHILE_RECORDING = 6;
    private static final int ENDED_FAILED_WHILE_RECORDING = 7;
    /** Ended without an outcome (an interrupt, a cancellation) while the deadline's write was under way. */
    private static final int CANCELLED_WHILE_RECORDING = 8;
    /** The low bits of a watch's state hold the phase, the rest the generation. */
    private static final int PHASE_BITS = 4;
    private static final long PHASE_MASK = (1L << PHASE_BITS) - 1;

    /** What the completion of a watched call still has to write. */
    enum Left {
        /** Record the outcome as usual; {@code slow} says whether it counts as slow. */
        OUTCOME,
        /** Nothing: the deadline counted it as a slow success. */
        NOTHING,
        /** Nothing, and the watch is not the completion's to free: the deadline's write under way finishes the job. */
        HANDED_OVER,
        /** Mark the counted slot failed. */
        SLOT_FAILED
    }

    private final Clock clock;
    private final Monotonic time;
    private final long thresholdNanos;
    private final long sweepNanos;
    private final OutcomeRecorder recorder;
    private final StoreAccess access;
    private final Policy policy;
    private final StoreErrors errors;
    /** Each thread's own watch. */
    private final ThreadLocal<Watch> own = new ThreadLocal<>();
    /** The per-thread watches, for the sweep. */
    private final Queue<WeakReference<Watch>> owned = new ConcurrentLinkedQueue<>();
    /** The watches made for one call (a thread's own was in use), while that call runs. */
    private final Set<Watch> single = ConcurrentHashMap.newKeySet();
    private final Object lifecycle = new Object();
    private volatile ScheduledThreadPoolExecutor sweeper;
    private volatile boolean closed;

    SlowCalls(Clock clock, Monotonic time, long thresholdMillis, OutcomeRecorder recorder, StoreAccess access,
            Policy policy, StoreErrors errors) {
        this.clock = clock;
        this.time = time;
        this.thresholdNanos = Monotonic.ofMillis(thresholdMillis);
        this.sweepNanos = sweepPeriodNanos(thresholdNanos);
        this.recorder = recorder;
        this.access = access;
        this.policy = policy;
        this.errors = errors;
    }

    /** How often the calls in flight are swept: an eighth of the threshold, within [1 ms, 250 ms]. */
    static long sweepPeriodNanos(long thresholdNanos) {
        return Math.max(Monotonic.ofMillis(1), Math.min(Monotonic.ofMillis(250), thresholdNanos / 8));
    }

    /**
     * The token a call admitted under {@code token} runs under: a {@link Watch} around it, or {@code token} itself
     * for a trial (judged by its own outcome) or once the breaker is closed.
     */
    Object watch(OperationState e, Object token) {
        if (token instanceof Trials.Trial
                || (token instanceof BreakerState && ((BreakerState) token).effectiveMode(policy) == BreakerMode.DISABLED)
                || !started()) {
            return token;
        }
        long tick = time.nanos();
        Watch w = own.get();
        if (w == null) {
            w = new Watch(false, thresholdNanos);
            own.set(w);
            owned.add(new WeakReference<>(w));
        }
        if (!w.begin(e, tick)) {
            w = new Watch(true, thresholdNanos);
            w.begin(e, tick);
            single.add(w);
        }
        return w;
    }

    /** Whether the sweeper runs (started now if this is the first watched call); false once closed. */
    private boolean started() {
        if (sweeper != null) {
            return true;
        }
        synchronized (lifecycle) {
            if (closed) {
                return false;
            }
            if (sweeper == null) {
                ScheduledThreadPoolExecutor x = new ScheduledThreadPoolExecutor(1, r -> {
                    Thread t = new Thread(r, "redeye-slow-calls");
                    t.setDaemon(true);
                    return t;
                });
                x.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
                x.scheduleWithFixedDelay(this::sweep, sweepNanos, sweepNanos, TimeUnit.NANOSECONDS);
                sweeper = x;
            }
            return true;
        }
    }

    /** Counts every call in flight past its deadline. Runs on the sweeper; never throws. */
    private void sweep() {
        try {
            long tick = time.nanos();
            for (Iterator<WeakReference<Watch>> i = owned.iterator(); i.hasNext(); ) {
                Watch w = i.next().get();
                if (w == null) {
                    i.remove(); // its thread ended
                } else {
                    deadlineAt(w, tick);
                }
            }
            for (Watch w : single) {
                deadlineAt(w, tick);
            }
        } catch (Throwable t) { // a sweep that throws would cancel every later one
            LOG.warn("judging the slow calls in flight failed", StoreErrors.storeError(t));
        }
    }

    /** How many watches made for one call are in use (for tests). */
    int singleCallWatches() {
        return single.size();
    }

    /** How many threads have a watch of their own (for tests). */
    int threadWatches() {
        return owned.size();
    }

    /** Whether a call that ran {@code nanos} is slow. */
    boolean isSlow(long nanos) {
        return nanos >= thresholdNanos;
    }

    @Override
    public void close() {
        ScheduledThreadPoolExecutor x;
        synchronized (lifecycle) {
            closed = true;
            x = sweeper;
        }
        if (x != null) {
            x.shutdownNow();
        }
    }

    /** The call watched by {@code w} ended ({@code failed}, or a success): what its completion still has to write. */
    Left end(Watch w, boolean failed) {
        if (w.to(RUNNING, ENDED)) {
            return Left.OUTCOME;
        }
        if (w.to(RECORDING, failed ? ENDED_FAILED_WHILE_RECORDING : ENDED_OK_WHILE_RECORDING)) {
            return Left.HANDED_OVER;
        }
        return phase(w.state) == COUNTED ? (failed ? Left.SLOT_FAILED : Left.NOTHING) : Left.OUTCOME;
    }

    /**
     * The call watched by {@code w} ended without an outcome: nothing more is written for it. Frees the watch
     * unless the deadline's write is under way (which then frees it).
     */
    void cancel(Watch w) {
        if (!w.to(RECORDING, CANCELLED_WHILE_RECORDING)) {
            free(w);
        }
    }

    /** The completion is done with {@code w} (after {@link #end} and what it left, but HANDED_OVER). */
    void free(Watch w) {
        if (w.forOneCall) {
            single.remove(w);
        }
        w.e = null;
        STATE.lazySet(w, next(w.state, FREE)); // only its thread's next call reads FREE
    }

    /** The deadline of the call {@code w} watches, if it passed by {@code tick}: counted as a slow success now. */
    void deadlineAt(Watch w, long tick) {
        long s = w.state;
        judge(w, s, w.startTick, tick);
    }

    /**
     * {@link #deadlineAt} on what a sweep read: the state {@code s}, then the start {@code start}. Both may be
     * an earlier generation's, or the start a later one's: the compare-and-set from {@code s} then fails.
     */
    void judge(Watch w, long s, long start, long tick) {
        if (phase(s) != RUNNING || !isSlow(tick - start) || !STATE.compareAndSet(w, s, next(s, RECORDING))) {
            return;
        }
        OperationState e = w.e;
        boolean counted = false;
        try {
            recorder.flush(e); // the outcomes held before it reach the store first
            StateChange ch = recorder.write(e, clock.millis(), time.nanos(),
                    (x, n) -> access.update(x.name, AtomicOperation.slowCall(), policy, n));
            BreakerState b = ch.state();
            if (ch.changed() && b.window() != null) {
                w.slot = b.window().position();
                w.version = b.version();
                counted = true;
            }
        } catch (StoreException ex) {
            errors.report(e, ex);
        } catch (Throwable ex) { // storeError rethrows a VirtualMachineError
            LOG.warn("recording a slow call of '{}' failed", OperationNames.abbreviate(e.name),
                    StoreErrors.storeError(ex));
        }
        if (w.to(RECORDING, counted ? COUNTED : NOT_COUNTED)) {
            return; // the completion does the rest, and frees the watch
        }
        // the call ended while the write was under way: do what its completion left, then free the watch
        int ended = phase(w.state);
        if (ended != CANCELLED_WHILE_RECORDING) {
            boolean failed = ended == ENDED_FAILED_WHILE_RECORDING;
            if (counted) {
                if (failed) {
                    recorder.writeQuietly(e, w.slotFailed());
                }
            } else {
                recorder.writeQuietly(e, AtomicOperation.outcome(!failed, true));
            }
        }
        free(w);
    }

    /**
     * The watch of one call at a time; see the class comment. It holds no reference to its {@link SlowCalls}: a
     * thread's own watch lives in the thread's thread-locals, which must not keep a closed breaker reachable.
     */
    static final class Watch {
        /** Whether this watch was made for one call (a thread's own was in use): dropped when that call ends. */
        private final boolean forOneCall;
        private final long thresholdNanos;
        /** The generation (high bits) and the phase (low {@link #PHASE_BITS} bits). */
        volatile long state;
        /** Written before the state becomes RUNNING; cleared when the watch is freed. */
        private OperationState e;
        private long startTick;
        /** Set before the phase becomes {@link #COUNTED}. */
        private long slot;
        private long version;

        Watch(boolean forOneCall, long thresholdNanos) {
            this.forOneCall = forOneCall;
            this.thresholdNanos = thresholdNanos;
        }

        /** Starts watching a call of {@code e} that started at {@code tick}; false if the watch is in use. */
        boolean begin(OperationState e, long tick) {
            long s = state;
            if (phase(s) != FREE) {
                return false;
            }
            this.e = e;
            this.startTick = tick;
            // a new generation; a release store: whoever sees RUNNING (the sweep, a completion) sees the fields
            STATE.lazySet(this, next(s, RUNNING) + (1L << PHASE_BITS));
            return true;
        }

        /** Whether the call ran at least the threshold by local time {@code tick}. */
        boolean slowAt(long tick) {
            return tick - startTick >= thresholdNanos;
        }

        /** The write that marks this call's slot failed. */
        AtomicOperation slotFailed() {
            return AtomicOperation.slowCallFailed(slot, version);
        }

        private boolean to(int from, int phase) {
            long s = state;
            return phase(s) == from && STATE.compareAndSet(this, s, next(s, phase));
        }
    }

    private static final AtomicLongFieldUpdater<Watch> STATE = AtomicLongFieldUpdater.newUpdater(Watch.class, "state");

    private static int phase(long state) {
        return (int) (state & PHASE_MASK);
    }

    private static long next(long state, int phase) {
        return (state & ~PHASE_MASK) | phase;
    }
}
