package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Transitions;
import java.time.Clock;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Write batching ({@link CircuitBreakerBuilder#recordBatching}): each operation's ordinary outcomes are held in
 * one {@link Batch} per operation and written as one {@link AtomicOperation#outcomes} operation, whose rule
 * leaves the state the outcomes one by one would leave.
 *
 * <h2>When a batch is written</h2>
 * <ul>
 * <li>{@code maxDelay} after its first outcome: one daemon thread per breaker ("redeye-record-batching", started
 * with the first batch, stopped by {@link #close()}) sweeps the batches held every eighth of the delay (1 ms to
 * 250 ms) and writes each whose first outcome is at least the delay less one sweep period old, by the breaker's
 * ticker, so no outcome waits longer than the delay;</li>
 * <li>when it holds {@value AtomicOperation#MAX_BATCH} outcomes, on the thread whose outcome filled it;</li>
 * <li>at once, on the recording thread, when a failure would open the breaker by what this instance knows: the
 * state the call was admitted under (else the state this instance's last batch left) with the batch's outcomes
 * folded over it makes a transition;</li>
 * <li>before this instance reads or changes the operation through the manual API, writes a trial's outcome or a
 * slow call's, when the operation is evicted, and on close ({@link #flush}, {@link #flushAll}).</li>
 * </ul>
 * One writer at a time per operation ({@link Batch#writing}): the batches of one operation reach the store in
 * the order their outcomes were recorded. A write that fails is reported like any outcome write and its
 * outcomes are dropped, never retried (the write may have landed).
 *
 * <h2>Nothing allocated per call</h2>
 * An outcome is a {@code long} ({@link AtomicOperation#packOutcome}) stored in the batch's array, made once per
 * operation; a write copies the outcomes into its operation. The failure check folds the batch (allocating as the
 * rules do) only for a failure.
 */
final class OutcomeBatcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);
    /** Instants outside what {@link AtomicOperation#packOutcome} holds are clamped to it (a clock gone wild). */
    private static final long MAX_AT = (1L << 61) - 1;

    /** One operation's outcomes not written yet. Its fields are guarded by its monitor. */
    static final class Batch {
        final OperationState entry;
        final long[] outcomes = new long[AtomicOperation.MAX_BATCH];
        /** How many of {@link #outcomes} are held; volatile so that {@link #holds} reads it without the monitor. */
        volatile int count;
        /** The ticker when the first outcome held was recorded. */
        long firstTick;
        /** In {@link #pending}. */
        boolean queued;
        /** The state this instance's last batch of the operation left, or null. */
        BreakerState written;
        /** Held by the one thread writing this operation's batch. */
        final Object writing = new Object();

        Batch(OperationState entry) {
            this.entry = entry;
        }
    }

    private final Clock clock;
    private final Monotonic time;
    private final Policy policy;
    private final String instance;
    private final OutcomeRecorder recorder;
    private final long delayNanos;
    private final long sweepNanos;
    private final Queue<Batch> pending = new ConcurrentLinkedQueue<>();
    private final Object lifecycle = new Object();
    private volatile ScheduledThreadPoolExecutor sweeper;
    private volatile boolean closed;

    /**
     * @param instance the instance the outcomes are attributed to under a quorum, else null
     */
    OutcomeBatcher(Clock clock, Monotonic time, Policy policy, String instance, OutcomeRecorder recorder,
            long delayMillis) {
        this.clock = clock;
        this.time = time;
        this.policy = policy;
        this.instance = instance;
        this.recorder = recorder;
        this.delayNanos = Monotonic.ofMillis(delayMillis);
        this.sweepNanos = sweepPeriodNanos(delayNanos);
    }

    /** How often the batches are swept: an eighth of the delay, within [1 ms, 250 ms]. */
    static long sweepPeriodNanos(long delayNanos) {
        return Math.max(Monotonic.ofMillis(1), Math.min(Monotonic.ofMillis(250), delayNanos / 8));
    }

    /** Whether outcomes of {@code e} are held, not written yet. */
    static boolean holds(OperationState e) {
        Batch b = e.batch;
        return b != null && b.count > 0;
    }

    /**
     * Holds one ordinary outcome of {@code e}, writing the batch at once if it is full or if a failure would open
     * the breaker by what this instance knows. Never throws.
     *
     * @param permit what the call was admitted under: a {@link BreakerState}, or anything else when nothing is known
     */
    void add(OperationState e, boolean success, boolean slow, Object permit) {
        Batch b = batchOf(e);
        long at = Math.max(-MAX_AT - 1, Math.min(MAX_AT, clock.millis()));
        boolean write;
        boolean enqueue = false;
        while (true) {
            synchronized (b) {
                int n = b.count;
                if (n < b.outcomes.length) {
                    if (n == 0) {
                        b.firstTick = time.nanos();
                        if (!b.queued) {
                            b.queued = true;
                            enqueue = true;
                        }
                    }
                    b.outcomes[n] = AtomicOperation.packOutcome(success, slow, at);
                    b.count = n + 1;
                    write = n + 1 == b.outcomes.length
                            || (!success && opens(permit instanceof BreakerState ? (BreakerState) permit : b.written,
                                    b.outcomes, n + 1));
                    break;
                }
            }
            flush(e); // full: another thread's outcome filled it and is writing it, or is about to
        }
        if (enqueue) {
            pending.add(b);
            startSweeper();
        }
        if (write) {
            flush(e);
        }
    }

    /** Whether the held outcomes folded over {@code base} make a transition (an opening, or a would-be one). */
    private boolean opens(BreakerState base, long[] outcomes, int n) {
        BreakerState s = base;
        for (int i = 0; i < n; i++) {
            long o = outcomes[i];
            StateChange c = Transitions.recordOutcome(s, (o & 1L) == 0, (o & 2L) != 0, policy, o >> 2, instance);
            if (c.isTransition()) {
                return true;
            }
            s = c.state();
        }
        return false;
    }

    private static Batch batchOf(OperationState e) {
        Batch b = e.batch;
        if (b == null) {
            synchronized (e) {
                b = e.batch;
                if (b == null) {
                    b = new Batch(e);
                    e.batch = b;
                }
            }
        }
        return b;
    }

    /** Writes the outcomes of {@code e} held now, if any, and waits for a write of them under way. Never throws. */
    void flush(OperationState e) {
        Batch b = e.batch;
        if (b == null) {
            return;
        }
        synchronized (b.writing) {
            AtomicOperation op;
            synchronized (b) {
                int n = b.count;
                if (n == 0) {
                    return;
                }
                op = AtomicOperation.outcomes(b.outcomes, n, instance);
                b.count = 0;
            }
            StateChange ch = recorder.writeBatch(e, op);
            if (ch != null) {
                synchronized (b) {
                    b.written = ch.state();
                }
            }
        }
    }

    /**
     * Writes every batch whose first outcome is due by the ticker (see the class comment); forgets the empty ones.
     * Called by the sweeping thread; tests on a virtual ticker call it after moving time.
     */
    void sweep() {
        long tick = time.nanos();
        for (Iterator<Batch> it = pending.iterator(); it.hasNext(); ) {
            Batch b = it.next();
            boolean due;
            synchronized (b) {
                if (b.count == 0) {
                    b.queued = false;
                    it.remove();
                    continue;
                }
                due = tick - b.firstTick >= delayNanos - sweepNanos;
            }
            if (due) {
                flush(b.entry);
            }
        }
    }

    /** Writes every batch held, due or not (the breaker closes). */
    void flushAll() {
        for (Batch b : pending) {
            flush(b.entry);
        }
    }

    private void sweepQuietly() {
        try {
            sweep();
        } catch (Throwable ex) { // a scheduled task that throws is never run again
            LOG.warn("writing batched outcomes failed", StoreErrors.storeError(ex));
        }
    }

    private void startSweeper() {
        if (sweeper != null || closed) {
            return;
        }
        synchronized (lifecycle) {
            if (sweeper == null && !closed) {
                ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, r -> {
                    Thread t = new Thread(r, "redeye-record-batching");
                    t.setDaemon(true);
                    return t;
                });
                s.setRemoveOnCancelPolicy(true);
                s.scheduleAtFixedRate(this::sweepQuietly, sweepNanos, sweepNanos, TimeUnit.NANOSECONDS);
                sweeper = s;
            }
        }
    }

    /** Whether the sweeping thread runs (for tests). */
    boolean sweeping() {
        return sweeper != null;
    }

    /** Stops the sweeping thread, then writes every batch held: nothing recorded before the close is lost. */
    @Override
    public void close() {
        ScheduledThreadPoolExecutor s;
        synchronized (lifecycle) {
            closed = true;
            s = sweeper;
        }
        if (s != null) {
            s.shutdownNow();
            try {
                s.awaitTermination(5, TimeUnit.SECONDS); // a sweep's write under way ends first
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
        flushAll();
    }
}
