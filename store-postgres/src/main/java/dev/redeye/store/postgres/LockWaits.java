package dev.redeye.store.postgres;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How long a statement of one store may wait for a row lock another session holds: one budget per breaker call,
 * whatever the number of waits inside it.
 *
 * <ul>
 * <li>Within a store call, every statement that can wait for a lock gets what is left of {@code lockTimeout}
 * since the call began, as its {@code lock_timeout}, and that plus a small slack as its {@code statement_timeout}
 * (PostgreSQL times each lock acquisition separately, and a {@code SELECT ... FOR UPDATE} queued behind another
 * waiter makes two: the statement timeout is what caps their sum). Retries of the call draw on the same budget.</li>
 * <li>Across store calls, a key whose row lock a call waited for until its budget ran out is remembered as held
 * by another session: every later call on it waits at most a probe ({@code lockTimeout / 10}) until one gets the
 * lock, which forgets it. So a half-open trial, which needs the row twice (claim, then outcome), waits
 * {@code lockTimeout} once and a probe the second time, and so does every call on that row in this store while it
 * stays held.</li>
 * </ul>
 * Bound per breaker call meeting a held row: {@link #callBoundMillis()} ({@code 1.2 x lockTimeout}). At most
 * {@value #MAX_HELD} keys are remembered (more held rows at once wait their full budget). Thread-safe; the healthy
 * path reads one empty map.
 */
final class LockWaits {
    static final int MAX_HELD = 10_000;

    private final long lockMillis;
    private final long probeMillis;
    private final long slackMillis;
    private final long statementMillis;
    /** Keys whose row another session was found holding, with when (ticker nanos). */
    private final ConcurrentHashMap<String, Long> held = new ConcurrentHashMap<>();

    LockWaits(Timeouts timeouts) {
        this.lockMillis = timeouts.lockMillis;
        this.probeMillis = Math.max(1, lockMillis / 10);
        this.slackMillis = Math.max(1, lockMillis / 50);
        this.statementMillis = timeouts.statementMillis;
    }

    /**
     * The bound on what one breaker call (at most two waits on its key: a trial's claim and outcome) waits in all
     * for a row lock another session holds: the budget, a probe, and a slack for each; 0 when unbounded.
     */
    long callBoundMillis() {
        return lockMillis == 0 ? 0 : lockMillis + probeMillis + 2 * slackMillis;
    }

    long probeMillis() {
        return probeMillis;
    }

    /**
     * The {@code lock_timeout} of a statement on {@code key} in a call that began at {@code callStartNanos}: what
     * is left of the budget (at least 1 ms), at most a probe while the key is remembered as held; 0 (no bound)
     * when lockTimeout is off.
     */
    long lockMillis(String key, long callStartNanos) {
        if (lockMillis == 0) {
            return 0;
        }
        long left = Math.max(1, lockMillis - (System.nanoTime() - callStartNanos) / 1_000_000L);
        return isHeld(key) ? Math.min(left, probeMillis) : left;
    }

    /** The {@code statement_timeout} to go with a statement's {@code lock_timeout} of {@code lock} ms. */
    long statementMillis(long lock) {
        if (lock == 0) {
            return statementMillis;
        }
        long capped = lock + slackMillis;
        return statementMillis == 0 ? capped : Math.min(statementMillis, capped);
    }

    /**
     * Binds the two parameters of {@link Timeouts#lockPrefix} (the first two of {@code ps}) for a statement on
     * {@code key}, and tells {@code attempt} that it is about to wait.
     *
     * @return the index of the statement's next parameter
     */
    int bind(PreparedStatement ps, SqlRunner.Attempt attempt, String key) throws SQLException {
        boolean probe = isHeld(key);
        long lock = lockMillis(key, attempt.callStartNanos);
        ps.setString(1, Long.toString(lock));
        ps.setString(2, Long.toString(statementMillis(lock)));
        attempt.waiting(key, lock, probe);
        return 3;
    }

    /** The statement bound by {@link #bind} returned: it got the row lock. */
    void granted(SqlRunner.Attempt attempt, String key) {
        attempt.waited();
        granted(key);
    }

    boolean isHeld(String key) {
        return !held.isEmpty() && held.containsKey(key);
    }

    /** A statement on {@code key} ran out of its lock budget: another session holds the row. */
    void ranOut(String key) {
        if (lockMillis > 0 && held.size() < MAX_HELD) {
            held.putIfAbsent(key, System.nanoTime());
        }
    }

    /** A statement on {@code key} got the row lock: the row is no longer held by someone else. */
    void granted(String key) {
        if (!held.isEmpty()) {
            held.remove(key);
        }
    }
}
