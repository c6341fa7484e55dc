package dev.redeye.resilience4j;

import dev.redeye.Permit;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * The redeye {@link Permit}s acquired through one adapter and not completed yet.
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
 * Each permit is taken once (a compare-and-set on its ticket), so two completions never complete one permit and
 * every completion completes at most one. When two calls of one name are in flight and one completes on a thread
 * that did not acquire it while the other's thread is still running, their permits may be swapped: each outcome
 * is still recorded exactly once, but a slow call's time or a trial's claim is attributed to the other call.
 *
 * <p>Outstanding permits are bounded ({@link #MAX_OUTSTANDING}): a caller that acquires and never completes (an
 * {@code Error} thrown past a Resilience4j decorator, which only catches {@code Exception}s) would otherwise grow
 * the ledger forever. Past the bound the oldest permit is released (recording nothing).
 */
final class PermitLedger {
    /** Past this many outstanding permits, the oldest is released unused. */
    static final int MAX_OUTSTANDING = 100_000;
    /** A thread's own stack is pruned of permits other threads took once it holds this many. */
    private static final int PRUNE_AT = 16;

    /** One outstanding permit; {@link #taken} is won once. */
    static final class Ticket {
        private static final AtomicIntegerFieldUpdater<Ticket> TAKEN =
                AtomicIntegerFieldUpdater.newUpdater(Ticket.class, "taken");
        final Permit permit;
        private volatile int taken;

        Ticket(Permit permit) {
            this.permit = permit;
        }

        boolean take() {
            return TAKEN.compareAndSet(this, 0, 1);
        }

        boolean isTaken() {
            return taken != 0;
        }
    }

    private final ConcurrentLinkedDeque<Ticket> outstanding = new ConcurrentLinkedDeque<>();
    private final AtomicInteger size = new AtomicInteger();
    private final ThreadLocal<ArrayDeque<Ticket>> mine = ThreadLocal.withInitial(ArrayDeque::new);

    /** Keeps a permitted {@code permit} until a completion takes it. */
    void add(Permit permit) {
        Ticket t = new Ticket(permit);
        outstanding.addLast(t);
        ArrayDeque<Ticket> stack = mine.get();
        if (stack.size() >= PRUNE_AT) {
            stack.removeIf(Ticket::isTaken);
        }
        stack.push(t);
        if (size.incrementAndGet() > MAX_OUTSTANDING) {
            Permit oldest = takeOldest();
            if (oldest != null) {
                oldest.release();
            }
        }
    }

    /**
     * Takes the permit a completion on this thread is for (see the class comment), or null when no permit is
     * outstanding (an outcome reported without {@code acquirePermission}).
     */
    Permit take() {
        ArrayDeque<Ticket> stack = mine.get();
        Ticket t;
        while ((t = stack.poll()) != null) {
            if (t.take()) {
                // Usually among the newest: the scan from the tail is short.
                outstanding.removeLastOccurrence(t);
                size.decrementAndGet();
                return t.permit;
            }
        }
        return takeOldest();
    }

    private Permit takeOldest() {
        Ticket t;
        while ((t = outstanding.pollFirst()) != null) {
            if (t.take()) {
                size.decrementAndGet();
                return t.permit; // its thread's stack drops the ticket lazily (taken)
            }
        }
        return null;
    }

    /** How many permits are outstanding (approximately, under concurrency). */
    int outstanding() {
        return Math.max(0, size.get());
    }
}
