package dev.redeye.store.dynamodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Transitions;
import dev.redeye.spi.support.StateCodec;
import dev.redeye.tck.MutableClock;
import dev.redeye.tck.Race;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Sliding windows, slow calls and modes through the DynamoDB store on dynalite: random sequences of every
 * {@link AtomicOperation} kind compared with {@link Transitions} applied in Java (every result and the state read
 * back, exactly), window writes racing over two clients (and the same race through get-then-put losing
 * outcomes), pinned states never expiring, layout 2 and its refusal by a layout-1 reader, and events carrying
 * the window and the mode.
 */
class DynamoDbWindowTest {
    @RegisterExtension
    static final DynamoTable DB = new DynamoTable("redeye_window");
    private static final String TABLE = DB.name();
    /** Wall-clock-like epoch ms for the rules' {@code now}: time windows bucket it. */
    private static final long T0 = 1_764_800_000_000L;
    private static final long STORE_CLOCK = 1_700_000_000_000L;

    /** A store over a DynamoDbClient of its own (two of them stand for two processes). */
    private DynamoDbStore store(UnaryOperator<DynamoDbStore.Builder> config) {
        return DB.store(config);
    }

    private static String key(String name) {
        return "window-test-" + System.nanoTime() + ":" + name;
    }

    private static Map<String, AttributeValue> item(String name) {
        return DB.raw().getItem(g -> g.tableName(TABLE).key(Items.key(Keys.partitionKey(name))).consistentRead(true))
                .item();
    }

    // ------------------------------------------------------------------------------------------ the rules

    /**
     * Random sequences of every operation kind under random policies (count and time windows of small sizes,
     * the other strategies, policy modes, thresholds reached by slow calls), with {@code now} moving within and
     * across bucket edges (and back, as a caller whose clock is behind): every result of the store and the state
     * read back equal what {@link AtomicOperation#apply} gives in Java from the previous state. Set the system
     * property {@code redeye.seed} to replay a failure.
     */
    @Test
    void randomSequencesOfEveryOperationMatchTheRulesInJavaExactly() {
        long seed = Long.getLong("redeye.seed", System.nanoTime());
        Random r = new Random(seed);
        MutableClock clock = new MutableClock(STORE_CLOCK);
        DynamoDbStore s = store(b -> b.clock(clock));
        Set<AtomicOperation.Kind> seen = java.util.EnumSet.noneOf(AtomicOperation.Kind.class);
        Set<TransitionKind> transitions = java.util.EnumSet.noneOf(TransitionKind.class);
        int slowFailuresCounted = 0;
        Set<TransitionKind> required = Set.of(TransitionKind.OPENED, TransitionKind.WOULD_OPEN,
                TransitionKind.MODE_CHANGED, TransitionKind.CLOSED, TransitionKind.REOPENED);
        // 24 sequences, then more (at most 200 in all) until the run has met every rule and transition it checks:
        // a seed that happens to miss one adds sequences rather than failing for want of a case.
        for (int seq = 0; seq < 24 || (seq < 200 && !(seen.size() == SINGLE_KINDS.size()
                && transitions.containsAll(required) && slowFailuresCounted > 0)); seq++) {
            String k = key("random-" + seq);
            Policy[] policies = {randomPolicy(r), randomPolicy(r)};
            BreakerState model = null; // what the store holds: null while the key has no state
            long now = T0 + r.nextInt(3_600_000);
            long slowSlot = 0;
            long slowVersion = 0;
            for (int step = 0; step < 50; step++) {
                Policy p = r.nextInt(8) == 0 ? policies[1] : policies[0];
                now = advance(r, now, p);
                BreakerState current = model != null ? model : BreakerState.INITIAL;
                AtomicOperation op = randomOperation(r, current, slowSlot, slowVersion);
                String where = "seed " + seed + " (replay with -Dredeye.seed=" + seed + "), sequence " + seq
                        + ", step " + step + ": " + op + " at " + now + " on " + model + " under " + p;
                // A key without state starts its life at the store clock in microseconds (no tombstone here).
                BreakerState prev = model != null ? model : BreakerState.initial(clock.millis() * 1_000L);
                StateChange expected = op.apply(prev, p, now);
                if (model == null && !expected.changed()) {
                    expected = StateChange.unchanged(BreakerState.INITIAL); // nothing written: the never-written state
                }
                StateChange got = s.apply(k, op, p, now);
                assertEquals(expected, got, where);
                if (got.changed()) {
                    model = got.state();
                }
                assertEquals(Optional.ofNullable(model), s.get(k), "read back after " + where);
                if (model != null) {
                    assertEquals(Items.layoutOf(model), Integer.parseInt(item(k).get(Items.LAYOUT).n()), where);
                }
                if (op.kind() == AtomicOperation.Kind.SLOW_CALL && got.state().window() != null) {
                    slowSlot = got.state().window().position();
                    slowVersion = got.state().version();
                }
                if (op.kind() == AtomicOperation.Kind.SLOW_CALL_FAILED && got.changed() && !got.previous().open()) {
                    slowFailuresCounted++;
                }
                seen.add(op.kind());
                if (got.transition() != null) {
                    transitions.add(got.transition());
                }
            }
        }
        assertEquals(SINGLE_KINDS, seen, "seed " + seed);
        assertTrue(transitions.containsAll(required),
                "the sequences reached too few transitions (seed " + seed + "): " + transitions);
        assertTrue(slowFailuresCounted > 0, "no slow call was marked failed in place (seed " + seed + ")");
    }

    private static final int[] TIME_SIZES = {1, 2, 3, 5, 130, 250}; // 130 s: 2-second buckets; 250 s: 3-second
    private static final double[] RATES = {25, 50, 60, 100};

    private static Policy randomPolicy(Random r) {
        Policy.Builder b = Policy.builder().jitter(0).resetTimeout(Duration.ofSeconds(1 + r.nextInt(3)))
                .maxResetTimeout(Duration.ofSeconds(20)).successThreshold(1 + r.nextInt(2));
        int strategy = r.nextInt(10);
        if (strategy == 0) {
            b.strategy(Strategy.CONSECUTIVE).failureThreshold(1 + r.nextInt(3));
        } else if (strategy == 1) {
            b.strategy(Strategy.ERROR_RATE).minimumCalls(1 + r.nextInt(3));
        } else if (r.nextBoolean()) {
            b.slidingWindow(SlidingWindowType.COUNT_BASED, 1 + r.nextInt(5));
        } else {
            b.slidingWindow(SlidingWindowType.TIME_BASED, TIME_SIZES[r.nextInt(TIME_SIZES.length)]);
        }
        b.minimumNumberOfCalls(1 + r.nextInt(4)).failureRateThreshold(RATES[r.nextInt(RATES.length)])
                .slowCallRateThreshold(RATES[r.nextInt(RATES.length)]);
        int mode = r.nextInt(10);
        b.mode(mode < 5 ? BreakerMode.NORMAL : mode < 8 ? BreakerMode.METRICS_ONLY : BreakerMode.DISABLED);
        return b.build();
    }

    /** The next {@code now}: the same ms, a little later, exactly on or just before a bucket edge, far later, or back. */
    private static long advance(Random r, long now, Policy p) {
        long bucket = 1000L * Math.max(1, SlidingWindow.bucketSeconds(p.slidingWindowSize()));
        long edge = Math.floorDiv(now, bucket) * bucket + bucket;
        int pick = r.nextInt(20);
        if (pick < 5) {
            return now;
        } else if (pick < 12) {
            return now + 1 + r.nextInt(999);
        } else if (pick < 14) {
            return edge;
        } else if (pick < 15) {
            return edge - 1;
        } else if (pick < 18) {
            return now + 1_000 + r.nextInt(10_000);
        } else if (pick < 19) {
            return now + 200_000 + r.nextInt(400_000); // past every small window and every reset window
        }
        return now - r.nextInt(3_000); // a caller whose clock is behind
    }

    /** Every kind but batches of outcomes (OUTCOMES), which the TCK's R14 and R8 check on this store. */
    private static final java.util.Set<AtomicOperation.Kind> SINGLE_KINDS =
            java.util.EnumSet.complementOf(java.util.EnumSet.of(AtomicOperation.Kind.OUTCOMES));
    private static final AtomicOperation.Kind[] WEIGHTED = weighted();

    private static AtomicOperation.Kind[] weighted() {
        List<AtomicOperation.Kind> w = new ArrayList<>();
        Map<AtomicOperation.Kind, Integer> weights = Map.ofEntries(
                Map.entry(AtomicOperation.Kind.FAILURE, 14), Map.entry(AtomicOperation.Kind.SUCCESS, 12),
                Map.entry(AtomicOperation.Kind.SLOW_SUCCESS, 8), Map.entry(AtomicOperation.Kind.SLOW_FAILURE, 8),
                Map.entry(AtomicOperation.Kind.SLOW_CALL, 10), Map.entry(AtomicOperation.Kind.SLOW_CALL_FAILED, 10),
                Map.entry(AtomicOperation.Kind.TRIAL_SUCCESS, 7), Map.entry(AtomicOperation.Kind.TRIAL_FAILURE, 6),
                Map.entry(AtomicOperation.Kind.FORCE_OPEN, 2), Map.entry(AtomicOperation.Kind.FORCE_HALF_OPEN, 3),
                Map.entry(AtomicOperation.Kind.FORCE_CLOSED, 3), Map.entry(AtomicOperation.Kind.FORCE_MODE, 4));
        for (AtomicOperation.Kind k : SINGLE_KINDS) {
            for (int i = 0; i < weights.get(k); i++) {
                w.add(k);
            }
        }
        return w.toArray(AtomicOperation.Kind[]::new);
    }

    /**
     * A random operation: trials mostly of the current period, a slow call's failure mostly with the slot and
     * version its {@code SLOW_CALL} returned (else the window's newest slot, or one before, at the current or a
     * stale version), a mode among all four.
     */
    private static AtomicOperation randomOperation(Random r, BreakerState current, long slowSlot, long slowVersion) {
        AtomicOperation.Kind kind = WEIGHTED[r.nextInt(WEIGHTED.length)];
        long version = current.version();
        switch (kind) {
            case TRIAL_SUCCESS:
            case TRIAL_FAILURE:
                return AtomicOperation.of(kind, r.nextInt(5) == 0 ? version - 1 : version, 0L);
            case SLOW_CALL_FAILED:
                if (slowSlot > 0 && r.nextInt(4) != 0) {
                    return AtomicOperation.of(kind, slowVersion, slowSlot);
                }
                long position = current.window() == null ? 0 : current.window().position();
                return AtomicOperation.of(kind, r.nextInt(4) == 0 ? version - 1 : version,
                        Math.max(0, position - r.nextInt(2)));
            case FORCE_MODE:
                return AtomicOperation.of(kind, BreakerMode.values()[r.nextInt(BreakerMode.values().length)].code(), 0L);
            default:
                return AtomicOperation.of(kind, 0L, 0L);
        }
    }

    // ------------------------------------------------------------------------------------------ atomicity

    /**
     * Eight threads over two clients record outcomes of all four kinds in a count window and in a time window
     * (the threads' {@code now} interleaving across buckets): afterwards each window holds every outcome, exactly.
     * Every call that changes only the window moves the write counter the conditional write compares, so a
     * concurrent window write retries instead of being overwritten (see the get-then-put race below, which
     * loses outcomes).
     */
    @Test
    void windowWritesOfEightThreadsOverTwoClientsCountEveryOutcomeExactly() throws Exception {
        DynamoDbStore[] both = {store(b -> b), store(b -> b)};
        String countKey = key("count-storm");
        String timeKey = key("time-storm");
        Policy count = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 1_000)
                .minimumNumberOfCalls(1_000).jitter(0).build();
        Policy time = Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, 60)
                .minimumNumberOfCalls(1_000_000).jitter(0).build();
        int threads = 8;
        int each = 24;
        Set<Long> positions = ConcurrentHashMap.newKeySet();
        Race.run(threads, Duration.ofMinutes(3), t -> {
            DynamoDbStore s = both[t % 2];
            for (int i = 0; i < each; i++) {
                AtomicOperation op = AtomicOperation.outcome(i % 2 == 0, (i / 2) % 2 == 0);
                positions.add(s.apply(countKey, op, count, T0 + i).state().window().position());
                s.apply(timeKey, op, time, T0 + 250L * i);
            }
        });
        int calls = threads * each;
        SlidingWindow cw = both[0].get(countKey).orElseThrow().window();
        assertEquals(calls, cw.position(), "outcomes recorded in the count window");
        assertEquals(calls, cw.calls());
        assertEquals(calls / 2, cw.failures());
        assertEquals(calls / 2, cw.slowCalls());
        assertEquals(calls, positions.size(), "every call saw its own outcome's position");
        SlidingWindow tw = both[1].get(timeKey).orElseThrow().window();
        assertEquals(calls, tw.calls(), "outcomes in the time window: " + tw);
        assertEquals(calls / 2, tw.failures());
        assertEquals(calls / 2, tw.slowCalls());
        long lost = both[0].usage().conditionFailures() + both[1].usage().conditionFailures();
        assertTrue(lost > 0, "8 threads on two items must have lost conditions (else the race proved nothing)");
    }

    /** The same race through get-then-put (no condition) loses window outcomes: what the condition prevents. */
    @Test
    void theSameWindowRaceThroughGetThenPutLosesOutcomes() throws Exception {
        DynamoDbStore[] both = {store(b -> b), store(b -> b)};
        String k = key("naive-window");
        Policy count = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 1_000)
                .minimumNumberOfCalls(1_000).jitter(0).build();
        int threads = 8;
        int each = 24;
        Race.run(threads, Duration.ofMinutes(3), t -> {
            DynamoDbStore s = both[t % 2];
            for (int i = 0; i < each; i++) {
                BreakerState cur = s.get(k).orElse(BreakerState.INITIAL);
                s.put(k, Transitions.recordOutcome(cur, i % 2 == 0, true, count, T0 + i).state(),
                        Duration.ofHours(1));
            }
        });
        int stored = both[0].get(k).orElseThrow().window().calls();
        assertTrue(stored < threads * each, "get-then-put under 8 threads kept all " + stored + " outcomes: the race"
                + " is not a race");
    }

    // ------------------------------------------------------------------------------------------ expiry

    @Test
    void aStoredModeIsPinnedAndNeverExpiresWhileAWindowAloneDoes() {
        MutableClock clock = new MutableClock(STORE_CLOCK);
        DynamoDbStore s = store(b -> b.clock(clock));
        String k = key("pinned-mode");
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 5).minimumNumberOfCalls(5)
                .jitter(0).resetTimeout(Duration.ofSeconds(1)).maxResetTimeout(Duration.ofSeconds(2))
                .stateTtl(Duration.ofSeconds(10)).build();
        StateChange m = s.apply(k, AtomicOperation.forceMode(BreakerMode.METRICS_ONLY), p, T0);
        assertEquals(TransitionKind.MODE_CHANGED, m.transition());
        for (int i = 1; i <= 3; i++) {
            s.apply(k, AtomicOperation.outcome(false, i == 2), p, T0 + i); // window writes while pinned
            assertFalse(item(k).containsKey(Items.EXPIRES), "a state holding a mode has no expiry attribute");
            assertFalse(item(k).containsKey(Items.GC), "a state holding a mode is never garbage collected");
        }
        clock.advance(Duration.ofDays(400));
        BreakerState held = s.get(k).orElseThrow(() -> new AssertionError("a stored mode expired"));
        assertEquals(BreakerMode.METRICS_ONLY, held.mode());
        assertEquals(3, held.window().calls());
        assertEquals(1, held.window().slowCalls());
        // the mode goes on working a year later: the policy is NORMAL, the stored mode keeps the breaker closed
        s.apply(k, AtomicOperation.failure(), p, T0 + 4);
        StateChange wouldOpen = s.apply(k, AtomicOperation.failure(), p, T0 + 5);
        assertEquals(TransitionKind.WOULD_OPEN, wouldOpen.transition());
        assertFalse(s.get(k).orElseThrow().open());

        StateChange back = s.apply(k, AtomicOperation.forceMode(BreakerMode.DEFAULT), p, T0 + 6);
        assertEquals(BreakerMode.DEFAULT, back.state().mode());
        assertTrue(item(k).containsKey(Items.EXPIRES), "the policy's mode again: the ttl applies again");
        s.apply(k, AtomicOperation.failure(), p, T0 + 7); // a window, not pinned
        assertEquals(String.valueOf(Items.LAYOUT_2), item(k).get(Items.LAYOUT).n());
        clock.advance(Duration.ofSeconds(11));
        assertEquals(Optional.empty(), s.get(k), "a window alone expires after stateTtl");

        // put of a state holding a mode ignores the ttl, as for a forced state
        String put = key("pinned-put");
        s.put(put, BreakerState.builder().mode(BreakerMode.DISABLED).version(3).build(), Duration.ofMillis(1));
        clock.advance(Duration.ofDays(1));
        assertEquals(BreakerMode.DISABLED, s.get(put).orElseThrow().mode());
        // a policy's mode is not stored, so a closed state under a METRICS_ONLY policy expires as ever
        String policyMode = key("policy-mode");
        s.apply(policyMode, AtomicOperation.failure(), p.toBuilder().mode(BreakerMode.METRICS_ONLY).build(), T0);
        assertTrue(item(policyMode).containsKey(Items.EXPIRES));
        clock.advance(Duration.ofSeconds(11));
        assertEquals(Optional.empty(), s.get(policyMode));
    }

    // ------------------------------------------------------------------------------------------ layout

    @Test
    void itemsWithAWindowOrAModeAreLayoutTwoAndALayoutOneReaderRefusesThem() {
        MutableClock clock = new MutableClock(STORE_CLOCK);
        DynamoDbStore s = store(b -> b.clock(clock));
        Policy window = Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, 3).minimumNumberOfCalls(10)
                .jitter(0).build();
        String k = key("layout2");
        BreakerState st = s.apply(k, AtomicOperation.outcome(false, true), window, T0).state();
        Map<String, AttributeValue> it = item(k);
        assertEquals("2", it.get(Items.LAYOUT).n());
        assertEquals(st.window().encode(), it.get(Items.STATE).m().get(StateCodec.WINDOW).s());
        assertFalse(it.get(Items.STATE).m().containsKey(StateCodec.MODE), "no mode field for DEFAULT");
        assertEquals(st, Items.decode(it, k, clock.millis(), TABLE).live());
        StoreException refused = assertThrows(StoreException.class,
                () -> Items.decode(it, k, clock.millis(), TABLE, Items.LAYOUT_1));
        assertTrue(refused.getMessage().contains("unknown layout 2"), refused.getMessage());

        String mode = key("layout2-mode");
        s.apply(mode, AtomicOperation.forceMode(BreakerMode.DISABLED), window, T0);
        Map<String, AttributeValue> mi = item(mode);
        assertEquals("2", mi.get(Items.LAYOUT).n());
        assertEquals("3", mi.get(Items.STATE).m().get(StateCodec.MODE).s());
        assertFalse(mi.get(Items.STATE).m().containsKey(StateCodec.WINDOW), "no window field without a window");
        assertThrows(StoreException.class, () -> Items.decode(mi, mode, clock.millis(), TABLE, Items.LAYOUT_1));

        // without a window or a mode an item stays layout 1, readable by a layout-1 reader
        String plain = key("layout1");
        s.apply(plain, AtomicOperation.failure(), Policy.builder().failureThreshold(5).jitter(0).build(), T0);
        assertEquals("1", item(plain).get(Items.LAYOUT).n());
        assertEquals(1, Items.decode(item(plain), plain, clock.millis(), TABLE, Items.LAYOUT_1).live().failures());
        // a write that drops the window (the breaker is forced closed) goes back to layout 1
        s.apply(k, AtomicOperation.force(dev.redeye.api.BreakerStatus.CLOSED), window, T0 + 1);
        assertEquals("1", item(k).get(Items.LAYOUT).n());
        // a tombstone holds no state: layout 1
        s.delete(mode);
        assertEquals("1", item(mode).get(Items.LAYOUT).n());
        Items.Stored tombstone = Items.decode(item(mode), mode, clock.millis(), TABLE, Items.LAYOUT_1);
        assertTrue(tombstone.exists());
        assertNull(tombstone.live());

        // a layout-1 item with a window field was not written by a redeye that knows windows: malformed
        String odd = key("layout1-window");
        Map<String, AttributeValue> bad = new HashMap<>(it);
        bad.put(Items.PK, Items.s(Keys.partitionKey(odd)));
        bad.put(Items.OP, Items.s(odd));
        bad.put(Items.LAYOUT, Items.n(Items.LAYOUT_1));
        DB.raw().putItem(r -> r.tableName(TABLE).item(bad));
        StoreException malformed = assertThrows(StoreException.class, () -> s.get(odd));
        assertTrue(malformed.getMessage().contains("layout 1 holds no"), malformed.getMessage());
        // an unknown later layout is refused by this version too
        bad.put(Items.LAYOUT, Items.n(Items.LAYOUT_3 + 1));
        DB.raw().putItem(r -> r.tableName(TABLE).item(bad));
        assertTrue(assertThrows(StoreException.class, () -> s.get(odd)).getMessage().contains("unknown layout 4"));
    }

    // ------------------------------------------------------------------------------------------ feed

    @Test
    void eventsCarryTheWindowAndTheMode() throws Exception {
        DynamoDbStore writer = store(b -> b);
        DynamoDbStore reader = store(b -> b.feedPollInterval(Duration.ofMillis(50)));
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        reader.subscribe(events::add, () -> { });
        String k = key("events");
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 4).minimumNumberOfCalls(2)
                .slowCallRateThreshold(50).failureRateThreshold(100).jitter(0).build();
        writer.apply(k, AtomicOperation.slowCall(), p, T0);
        StateChange opened = writer.apply(k, AtomicOperation.success(), p, T0 + 1); // 1 slow of 2 = 50 %
        assertEquals(TransitionKind.OPENED, opened.transition());
        StateChange mode = writer.apply(k, AtomicOperation.forceMode(BreakerMode.METRICS_ONLY), p, T0 + 2);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (events.size() < 2) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for two events: " + events);
            Thread.sleep(20);
        }
        assertEquals(opened.state(), events.get(0).state(), "the opening's event holds the window");
        assertEquals(2, events.get(0).state().window().calls());
        assertEquals(mode.state(), events.get(1).state(), "the mode change's event holds the mode");
        assertEquals(BreakerMode.METRICS_ONLY, events.get(1).state().mode());
        assertNull(events.get(1).state().window());
    }
}
