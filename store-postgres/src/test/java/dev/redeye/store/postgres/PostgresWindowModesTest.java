package dev.redeye.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.StoreException;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicOperation.Kind;
import dev.redeye.spi.StateChange;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Sliding windows, slow calls and modes through the PostgreSQL store, against a real server: every
 * {@link AtomicOperation} kind under random policies round-trips exactly (the result of each call, the state read
 * back, the row's layout and expiry, and the events of both feed kinds equal {@link AtomicOperation#apply} run in
 * Java on the model state); a pinned state (a stored mode) never expires; the window and mode columns are checked
 * like every other state column.
 */
class PostgresWindowModesTest {
    private static final long T0 = 1_764_800_000_123L;
    private static final Duration TTL = Duration.ofHours(1);

    @RegisterExtension
    static final PgSchema PG = new PgSchema("redeye_windows");

    private static PostgresStore open(String table, String params) {
        return PG.keep(PostgresStore.open(PgTestSupport.urlWith("schema=" + PG.name() + "&table=" + table
                + (params.isEmpty() ? "" : "&" + params))));
    }

    // ------------------------------------------------------------------ random model run

    /** A small random policy: mostly sliding windows (count or time, a few slots or buckets), any mode. */
    private static Policy randomPolicy(Random r) {
        Policy.Builder b = Policy.builder().jitter(0.0).successThreshold(1 + r.nextInt(2))
                .resetTimeout(Duration.ofMillis(200 + r.nextInt(3000)));
        int strategy = r.nextInt(10);
        if (strategy < 7) {
            switch (r.nextInt(3)) {
                case 0 -> b.slidingWindow(SlidingWindowType.COUNT_BASED, 1 + r.nextInt(5));
                case 1 -> b.slidingWindow(SlidingWindowType.TIME_BASED, 1 + r.nextInt(4));
                // two or three seconds a bucket: edges that are not on every second
                default -> b.slidingWindow(SlidingWindowType.TIME_BASED, 121 + r.nextInt(240));
            }
            double[] rates = {20, 34, 50, 66.7, 100};
            b.minimumNumberOfCalls(1 + r.nextInt(4)).failureRateThreshold(rates[r.nextInt(rates.length)])
                    .slowCallRateThreshold(rates[r.nextInt(rates.length)]);
        } else {
            b.strategy(strategy == 7 ? Strategy.CONSECUTIVE : strategy == 8 ? Strategy.ERROR_RATE : Strategy.LEAKY)
                    .failureThreshold(1 + r.nextInt(3)).minimumCalls(1 + r.nextInt(3));
        }
        int mode = r.nextInt(20);
        return b.mode(mode < 11 ? BreakerMode.NORMAL : mode < 17 ? BreakerMode.METRICS_ONLY : BreakerMode.DISABLED)
                .build();
    }

    /** A slow call's handle: the window position and version of the state its SLOW_CALL returned. */
    private record SlowCall(long slot, long version) {
    }

    /**
     * A random operation; a batch of outcomes ({@link AtomicOperation#outcomes}) has 1 to 20 of them at instants
     * from {@code now} on, a few ms apart.
     */
    private static AtomicOperation randomOperation(Random r, BreakerState model, List<SlowCall> slowCalls, long now) {
        long version = model == null ? 0 : model.version();
        int x = r.nextInt(100);
        if (x < 12) {
            return AtomicOperation.failure();
        } else if (x < 24) {
            return AtomicOperation.success();
        } else if (x < 32) {
            return AtomicOperation.outcome(true, true);
        } else if (x < 40) {
            return AtomicOperation.outcome(false, true);
        } else if (x < 50) {
            return AtomicOperation.slowCall();
        } else if (x < 62) {
            if (!slowCalls.isEmpty() && r.nextInt(5) > 0) {
                // the latest slow call mostly, an older one (another slot or version) sometimes
                SlowCall c = r.nextInt(3) > 0 ? slowCalls.get(slowCalls.size() - 1)
                        : slowCalls.get(r.nextInt(slowCalls.size()));
                return AtomicOperation.of(Kind.SLOW_CALL_FAILED, c.version, c.slot);
            }
            return AtomicOperation.slowCallFailed(r.nextInt(4), version);
        } else if (x < 78) {
            long v = r.nextInt(5) > 0 ? version : version - 1;
            return r.nextBoolean() ? AtomicOperation.trialSucceeded(v) : AtomicOperation.trialFailed(v);
        } else if (x < 80) {
            return AtomicOperation.of(Kind.FORCE_OPEN, 0);
        } else if (x < 84) {
            return AtomicOperation.of(Kind.FORCE_HALF_OPEN, 0);
        } else if (x < 88) {
            return AtomicOperation.of(Kind.FORCE_CLOSED, 0);
        } else if (x < 94) {
            int n = 1 + r.nextInt(20);
            long[] packed = new long[n];
            long at = now;
            for (int i = 0; i < n; i++) {
                at += r.nextInt(300);
                packed[i] = AtomicOperation.packOutcome(r.nextInt(3) > 0, r.nextInt(4) == 0, at);
            }
            return AtomicOperation.outcomes(packed, n, null);
        }
        BreakerMode[] modes = BreakerMode.values();
        return AtomicOperation.forceMode(modes[r.nextInt(modes.length)]);
    }

    /** The next {@code now}: mostly forward within or across bucket edges, sometimes a caller's clock behind. */
    private static long step(Random r, long now) {
        int x = r.nextInt(10);
        if (x < 2) {
            return now;
        } else if (x < 5) {
            return now + 1 + r.nextInt(400);
        } else if (x < 8) {
            return now + 500 + r.nextInt(1500);
        } else if (x < 9) {
            return now + 2_000 + r.nextInt(5_000);
        }
        return now - r.nextInt(1_500);
    }

    /**
     * Random sequences of every operation kind on many keys, each under two random policies (so a window
     * sometimes meets a policy of another shape), with {@code now} crossing bucket edges: every result equals the
     * rule applied in Java to the model state (a key's first operation to the store's new-life state), the state
     * read back equals the model exactly, the row's layout is 2 exactly when the state has a window or a mode and
     * its expiry is NULL exactly when the state is pinned, and both a LISTEN and a polled feed deliver each key's
     * events, window and mode included, in order.
     */
    @Test
    void everyOperationKindRoundTripsExactlyUnderRandomWindowsAndModes() throws Exception {
        String table = PG.newTable();
        PostgresStore store = open(table, "");
        PostgresStore polled = open(table, "feed=poll&pollIntervalMillis=50");
        Collector listening = Collector.subscribe(store);
        Collector polling = Collector.subscribe(polled);
        Map<Kind, Integer> applied = new EnumMap<>(Kind.class);
        Map<TransitionKind, Integer> transitions = new EnumMap<>(TransitionKind.class);
        Map<String, List<TransitionEvent>> expectedEvents = new LinkedHashMap<>();
        int[] layout2 = {0};
        int[] pinned = {0};
        int[] slowCallsFailed = {0};
        int[] timeWindows = {0};
        try (Connection c = PgTestSupport.dataSource().getConnection();
             PreparedStatement row = c.prepareStatement("SELECT layout, expires_at IS NULL FROM "
                     + PG.qualified(table) + " WHERE key_hash = sha256(convert_to(?, 'UTF8'))")) {
            for (int seed = 1; seed <= 30; seed++) {
                Random r = new Random(seed);
                String key = "op-" + seed;
                Policy[] policies = {randomPolicy(r), randomPolicy(r)};
                List<TransitionEvent> events = new ArrayList<>();
                expectedEvents.put(key, events);
                List<SlowCall> slowCalls = new ArrayList<>();
                boolean lastWasSlowCall = false;
                BreakerState model = null;
                long now = T0 + r.nextInt(10_000);
                for (int i = 0; i < 70; i++) {
                    Policy p = policies[r.nextInt(7) == 0 ? 1 : 0];
                    // a slow call often ends, failed, right after it was counted (before anything else moved)
                    boolean justCounted = i > 0 && !slowCalls.isEmpty() && lastWasSlowCall && r.nextInt(5) < 2;
                    SlowCall latest = justCounted ? slowCalls.get(slowCalls.size() - 1) : null;
                    AtomicOperation op = justCounted ? AtomicOperation.slowCallFailed(latest.slot, latest.version)
                            : randomOperation(r, model, slowCalls, now);
                    now = step(r, now);
                    String where = "seed " + seed + ", step " + i + ": " + op + " at " + now + " on " + model
                            + " under " + p;
                    StateChange actual = store.apply(key, op, p, now);
                    StateChange expected;
                    if (model == null) {
                        StateChange onAbsent = op.apply(null, p, now);
                        // a change starts the key's life at the store's version base, read back from the result
                        expected = onAbsent.changed()
                                ? op.apply(BreakerState.initial(actual.previous().version()), p, now) : onAbsent;
                        assertTrue(!onAbsent.changed() || actual.previous().version() > 0, where);
                    } else {
                        expected = op.apply(model, p, now);
                    }
                    assertEquals(expected, actual, where);
                    if (model != null || expected.changed()) {
                        model = expected.state();
                    }
                    applied.merge(op.kind(), 1, Integer::sum);
                    if (expected.isTransition()) {
                        transitions.merge(expected.transition(), 1, Integer::sum);
                        events.add(expected.toEvent(key, p, now));
                    }
                    if (op.kind() == Kind.SLOW_CALL_FAILED && expected.changed() && !expected.previous().open()) {
                        slowCallsFailed[0]++; // marked failed in place
                    }
                    lastWasSlowCall = op.kind() == Kind.SLOW_CALL && expected.changed() && model.window() != null;
                    if (lastWasSlowCall) {
                        slowCalls.add(new SlowCall(model.window().position(), model.version()));
                    }
                    assertEquals(Optional.ofNullable(model), store.get(key), "read back, " + where);
                    row.setString(1, key);
                    try (ResultSet rs = row.executeQuery()) {
                        if (model == null) {
                            assertFalse(rs.next(), "no row for a key never written, " + where);
                            continue;
                        }
                        assertTrue(rs.next(), where);
                        assertEquals(StoredRow.layoutOf(model), rs.getInt(1), "layout, " + where);
                        assertEquals(model.pinned(), rs.getBoolean(2), "no expiry exactly when pinned, " + where);
                    }
                    layout2[0] += StoredRow.layoutOf(model) == StoredRow.LAYOUT_WINDOW_OR_MODE ? 1 : 0;
                    pinned[0] += model.pinned() ? 1 : 0;
                    timeWindows[0] += model.window() != null
                            && model.window().type() == SlidingWindowType.TIME_BASED ? 1 : 0;
                }
            }
        }
        System.out.println("operations " + applied + ", transitions " + transitions + ", layout-2 states "
                + layout2[0] + ", pinned " + pinned[0] + ", time windows " + timeWindows[0]
                + ", slow calls marked failed " + slowCallsFailed[0]);
        for (Kind k : Kind.values()) {
            assertTrue(applied.getOrDefault(k, 0) > 0, "the run applied " + k);
        }
        for (TransitionKind k : List.of(TransitionKind.OPENED, TransitionKind.WOULD_OPEN, TransitionKind.MODE_CHANGED,
                TransitionKind.CLOSED, TransitionKind.REOPENED)) {
            assertTrue(transitions.getOrDefault(k, 0) > 0, "the run made a " + k + " transition: " + transitions);
        }
        assertTrue(layout2[0] > 0 && pinned[0] > 0 && timeWindows[0] > 0 && slowCallsFailed[0] > 0,
                "the run stored windows, modes and failed slow calls");
        for (Map.Entry<String, List<TransitionEvent>> e : expectedEvents.entrySet()) {
            assertTrue(PgTestSupport.eventually(() -> listening.of(e.getKey()).size() >= e.getValue().size()
                    && polling.of(e.getKey()).size() >= e.getValue().size()), "the feeds deliver " + e.getKey());
            assertEquals(e.getValue(), listening.of(e.getKey()), "LISTEN feed of " + e.getKey());
            assertEquals(e.getValue(), polling.of(e.getKey()), "polled feed of " + e.getKey());
        }
        assertEquals(0, listening.gaps.get() + polling.gaps.get(), "no gap in either feed");
    }

    // ------------------------------------------------------------------ atomicity of windows

    /**
     * Threads recording outcomes on one key of a count window lose none: the window's position is the number of
     * calls, and its failure and slow counts those recorded. A read-modify-write outside the row lock loses
     * updates here (two threads read one window and each writes it back with its own outcome only), as the
     * control at the end shows with the two interleaved deterministically.
     */
    @Test
    void concurrentWindowOutcomesAreNeverLost() throws Exception {
        String table = PG.newTable();
        PostgresStore store = open(table, "lockTimeoutMillis=10000&statementTimeoutMillis=15000");
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, SlidingWindow.MAX_COUNT_SIZE)
                .minimumNumberOfCalls(SlidingWindow.MAX_COUNT_SIZE).build();
        int threads = 8;
        int each = 40;
        AtomicInteger failures = new AtomicInteger();
        AtomicInteger slow = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                done.add(pool.submit(() -> {
                    Random r = new Random(seed);
                    for (int i = 0; i < each; i++) {
                        boolean failed = r.nextBoolean();
                        boolean isSlow = r.nextInt(3) == 0;
                        failures.addAndGet(failed ? 1 : 0);
                        slow.addAndGet(isSlow ? 1 : 0);
                        store.apply("shared", AtomicOperation.outcome(!failed, isSlow), p, T0 + i);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        SlidingWindow w = store.get("shared").orElseThrow().window();
        assertEquals(threads * each, w.position(), "every outcome was recorded once");
        assertEquals(threads * each, w.calls());
        assertEquals(failures.get(), w.failures());
        assertEquals(slow.get(), w.slowCalls());

        // The control: two read-modify-writes outside the row lock, interleaved as racing threads can be, record
        // two outcomes into one window and keep one, which the position check above sees.
        BreakerState first = store.get("control").orElse(null);
        BreakerState second = store.get("control").orElse(null);
        store.put("control", AtomicOperation.failure().apply(first, p, T0).state(), TTL);
        store.put("control", AtomicOperation.success().apply(second, p, T0).state(), TTL);
        assertEquals(1, store.get("control").orElseThrow().window().position(), "the non-atomic control lost one");
    }

    // ------------------------------------------------------------------ pinned states

    /** The row's expires_at is NULL (never expires). */
    private static boolean noExpiry(String table, String key) throws SQLException {
        return PgTestSupport.count("SELECT count(*) FROM " + PG.qualified(table) + " WHERE key = ? AND expires_at IS "
                + "NULL", key) == 1;
    }

    /**
     * A stored mode is an operator's decision: written without expiry by every write that keeps it (the forced
     * mode, which also removes the key's trial claims, outcomes counted under it, put), never read as expired nor
     * purged even with an expiry in the past, and given the policy's ttl again by the write that stores DEFAULT.
     */
    @Test
    void aStatePinnedByItsModeNeverExpires() throws Exception {
        String table = PG.newTable();
        PostgresStore store = open(table, "purgeIntervalMillis=0");
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 4).minimumNumberOfCalls(2)
                .build();

        assertTrue(store.claimTrial("k", 1, TTL).isPresent());
        StateChange moded = store.apply("k", AtomicOperation.forceMode(BreakerMode.METRICS_ONLY), p, T0);
        assertEquals(TransitionKind.MODE_CHANGED, moded.transition());
        assertTrue(store.claimTrial("k", 1, TTL).isPresent(), "a forced mode removes the key's trial claims");
        assertTrue(noExpiry(table, "k"), "the forced mode is stored without expiry");
        StateChange counted = store.apply("k", AtomicOperation.outcome(false, true), p, T0 + 1);
        assertEquals(BreakerMode.METRICS_ONLY, counted.state().mode());
        assertNotNull(counted.state().window());
        assertTrue(noExpiry(table, "k"), "an outcome counted under the mode keeps it without expiry");

        // an expiry in the past (as an older writer could leave it) neither expires nor purges the pinned state
        PgTestSupport.update("UPDATE " + PG.qualified(table) + " SET expires_at = clock_timestamp() - interval "
                + "'1 hour' WHERE key = 'k'");
        assertEquals(Optional.of(counted.state()), store.get("k"));
        assertEquals(0, store.purgeExpired());
        assertEquals(counted.state(), store.apply("k", AtomicOperation.slowCall(), p, T0 + 2).previous(),
                "an atomic operation reads the pinned state, not a new life");

        StateChange back = store.apply("k", AtomicOperation.forceMode(BreakerMode.DEFAULT), p, T0 + 3);
        assertEquals(BreakerMode.DEFAULT, back.state().mode());
        assertFalse(noExpiry(table, "k"), "the DEFAULT mode takes the policy's ttl again");
        PgTestSupport.update("UPDATE " + PG.qualified(table) + " SET expires_at = clock_timestamp() - interval "
                + "'1 hour' WHERE key = 'k'");
        assertEquals(Optional.empty(), store.get("k"), "an unpinned state expires");

        BreakerState disabled = BreakerState.builder().mode(BreakerMode.DISABLED).version(7).build();
        store.put("p", disabled, Duration.ofMillis(1));
        assertTrue(noExpiry(table, "p"), "put of a pinned state ignores its ttl");
        assertEquals(Optional.of(disabled), store.get("p"));
        BreakerState windowOnly = BreakerState.builder().window(p.emptyWindow().record(true, false, T0)).version(8)
                .build();
        store.put("w", windowOnly, TTL);
        assertFalse(noExpiry(table, "w"), "a window does not pin a state");
        assertEquals(Optional.of(windowOnly), store.get("w"));
    }

    // ------------------------------------------------------------------ layouts

    /**
     * Every window and mode survives put and get as is (both window types, each mode), in layout 2; a state with
     * neither is layout 1, as the releases before sliding windows wrote it, with the new columns at their defaults.
     */
    @Test
    void windowsAndModesRoundTripInLayoutTwoAndTheRestStaysLayoutOne() throws Exception {
        String table = PG.newTable();
        PostgresStore store = open(table, "");
        SlidingWindow count = SlidingWindow.empty(SlidingWindowType.COUNT_BASED, 5).record(true, true, T0)
                .record(false, true, T0).record(false, false, T0);
        SlidingWindow slowCall = SlidingWindow.empty(SlidingWindowType.TIME_BASED, 240).record(true, false, T0)
                .record(false, true, T0 + 5_000);
        SlidingWindow time = slowCall.slowCallFailed(slowCall.position(), T0 + 5_000);
        assertEquals(3, time.failures() + time.slowCalls(), "two buckets: a failure, a slow call marked failed");
        Map<String, BreakerState> states = new LinkedHashMap<>();
        states.put("plain", StoredStates.RICH);
        states.put("count", StoredStates.RICH.toBuilder().window(count).build());
        states.put("time", StoredStates.RICH.toBuilder().window(time).mode(BreakerMode.NORMAL).build());
        for (BreakerMode m : BreakerMode.values()) {
            states.put("mode " + m, StoredStates.RICH.toBuilder().mode(m).build());
        }
        for (Map.Entry<String, BreakerState> e : states.entrySet()) {
            store.put(e.getKey(), e.getValue(), TTL);
            assertEquals(Optional.of(e.getValue()), store.get(e.getKey()), e.getKey());
            BreakerState s = e.getValue();
            int layout = s.window() == null && s.mode() == BreakerMode.DEFAULT ? 1 : 2;
            assertEquals(1, PgTestSupport.count("SELECT count(*) FROM " + PG.qualified(table) + " WHERE key = ? AND "
                    + "layout = ? AND sliding_window IS NOT DISTINCT FROM ? AND mode = ?", e.getKey(), layout,
                    s.window() == null ? null : s.window().encode(), s.mode().code()), e.getKey());
        }
        // a state that loses its window and mode goes back to layout 1, readable by the releases before windows
        store.put("count", StoredStates.RICH, TTL);
        assertEquals(1, PgTestSupport.count("SELECT count(*) FROM " + PG.qualified(table) + " WHERE key = 'count' "
                + "AND layout = 1 AND sliding_window IS NULL AND mode = 0"));
    }

    /**
     * The window and mode columns are checked like the others: an undecodable window, an unknown mode, and a
     * layout that does not match them (layout 1 is what the releases before sliding windows read, so a window or
     * mode in it would be lost by them) are malformed, refused by every read and atomic operation, and left as
     * they are (only put, an overwrite, and delete replace them).
     */
    @Test
    void windowAndModeColumnsThatDoNotMatchTheLayoutAreMalformed() throws Exception {
        String table = PG.newTable();
        PostgresStore store = open(table, "");
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 3).build();
        List<String> corruptions = List.of("sliding_window = 'c3.1.1'", "mode = 2", "layout = 2",
                "layout = 2, sliding_window = 'c3.1.7'", "layout = 2, sliding_window = 'c3.1.11'", "layout = 2, mode = 9");
        for (String corruption : corruptions) {
            String key = "corrupt " + corruption;
            store.put(key, StoredStates.RICH, TTL);
            PgTestSupport.update("UPDATE " + PG.qualified(table) + " SET " + corruption + " WHERE key = ?", key);
            StoreException e = assertThrows(StoreException.class, () -> store.get(key), corruption);
            assertTrue(e.getMessage().contains("malformed"), e.getMessage());
            assertThrows(StoreException.class, () -> store.apply(key, AtomicOperation.slowCall(), p, T0), corruption);
            assertThrows(StoreException.class,
                    () -> store.apply(key, AtomicOperation.forceMode(BreakerMode.DEFAULT), p, T0), corruption);
            assertEquals(1, PgTestSupport.count("SELECT count(*) FROM " + PG.qualified(table) + " WHERE key = ? AND "
                    + corruption.replace(",", " AND"), key), "left as it was: " + corruption);
        }
        // a placeholder (layout 0) carrying a window or a mode is not the store's placeholder either
        for (String corruption : List.of("sliding_window = 'c3.1.1'", "mode = 1")) {
            String key = "placeholder " + corruption;
            PgTestSupport.update("INSERT INTO " + PG.qualified(table) + " (key_hash, key, layout) VALUES "
                    + "(sha256(convert_to(?, 'UTF8')), ?, 0)", key, key);
            assertEquals(Optional.empty(), store.get(key), "the store's own placeholder reads as absent");
            PgTestSupport.update("UPDATE " + PG.qualified(table) + " SET " + corruption + " WHERE key = ?", key);
            StoreException e = assertThrows(StoreException.class, () -> store.get(key), corruption);
            assertTrue(e.getMessage().contains("layout 0"), e.getMessage());
        }
        assertNull(store.get("never").orElse(null));
    }
}
