package dev.redeye.store.dynamodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Contribution;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Transitions;
import dev.redeye.spi.support.StateCodec;
import dev.redeye.tck.Race;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The stored form of a quorum's contributions ({@link BreakerState#contributors()}) on dynalite: a state with
 * contributions is written in layout 3 with the field {@code st.contributors} ({@link Contribution#encodeAll}), on
 * every path (atomic write, put, get, the feed), and the reader of the release before quorums (layouts 1 and 2)
 * refuses it; a state without them keeps layouts 1 and 2 exactly as that release wrote them, and its items are
 * still read; a {@code contributors} field that is not the store's, or that does not match the layout, is a
 * malformed item that every call refuses and leaves as it was; contributions are counted exactly under contention
 * (and lost by get-then-put).
 */
class DynamoDbQuorumLayoutTest {
    @RegisterExtension
    static final DynamoTable DB = new DynamoTable("redeye_quorum");
    private static final String TABLE = DB.name();
    private static final long T0 = 1_764_900_000_000L;
    private static final Duration TTL = Duration.ofHours(1);

    /** A store over a DynamoDbClient of its own (two of them stand for two processes). */
    private DynamoDbStore store(UnaryOperator<DynamoDbStore.Builder> config) {
        return DB.store(config);
    }

    private DynamoDbStore store() {
        return store(b -> b);
    }

    private static String key(String name) {
        return "quorum-test-" + System.nanoTime() + ":" + name;
    }

    private static Map<String, AttributeValue> item(String name) {
        return DB.raw().getItem(g -> g.tableName(TABLE).key(Items.key(Keys.partitionKey(name))).consistentRead(true))
                .item();
    }

    /** The item's layout and {@code st.contributors}, as {@code "layout|contributors"} ("null" when absent). */
    private static String stored(String name) {
        Map<String, AttributeValue> it = item(name);
        AttributeValue c = it.get(Items.STATE).m().get(StateCodec.CONTRIBUTORS);
        return it.get(Items.LAYOUT).n() + "|" + (c == null ? null : c.s());
    }

    /** The item as the reader of the release before quorums reads it: it knows layouts 1 and 2. */
    private static Items.Stored readByThePreviousRelease(String name) {
        return Items.decode(item(name), name, System.currentTimeMillis(), TABLE, Items.LAYOUT_2);
    }

    private static Policy quorum() {
        return Policy.builder().failureThreshold(3).quorum(2).jitter(0.0).build();
    }

    @Test
    void theStoreDeclaresQuorumState() {
        DynamoDbStore s = store();
        assertEquals(Optional.of(s), s.capability(QuorumState.class));
    }

    /**
     * Outcomes attributed to instances are written in layout 3, their contributions in {@code st.contributors} as
     * {@link Contribution#encodeAll} gives them, read back equal by get and by a second client, and carried by the
     * feed's events; the release before quorums refuses the item instead of reading it without them. A state
     * written without contributions goes back to layout 1, which that release reads.
     */
    @Test
    void contributionsAreWrittenInLayout3OnTheAtomicPathAndTravelInTheFeed() throws Exception {
        DynamoDbStore a = store();
        DynamoDbStore b = store(c -> c.feedPollInterval(Duration.ofMillis(50)));
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        b.subscribe(events::add, () -> { });
        String k = key("atomic");
        Policy p = quorum();

        a.apply(k, AtomicOperation.outcome(false, false, "A"), p, T0);
        StateChange second = a.apply(k, AtomicOperation.outcome(false, false, "A"), p, T0 + 1);
        assertEquals(List.of(new Contribution("A", 2, 2, T0 + 1)), second.state().contributors());
        assertEquals("3|A,2,2,1764900000001", stored(k));
        assertEquals(Optional.of(second.state()), b.get(k), "a second client reads the contributions");
        StoreException previous = assertThrows(StoreException.class, () -> readByThePreviousRelease(k));
        assertTrue(previous.getMessage().contains("unknown layout 3"), previous.getMessage());
        assertTrue(previous.getMessage().contains(k), previous.getMessage());

        StateChange third = b.apply(k, AtomicOperation.outcome(false, false, "B"), p, T0 + 2);
        assertEquals(TransitionKind.OPENED, third.transition(), "A's and B's failures make the quorum of 2");
        assertEquals("3|B,1,1,1764900000002;A,2,2,1764900000001", stored(k));
        assertEquals(Optional.of(third.state()), a.get(k));
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (events.isEmpty()) {
            assertTrue(System.nanoTime() < deadline, "the opening never reached the feed");
            Thread.sleep(20);
        }
        assertEquals(third.state(), events.get(0).state(), "the event carries the state, contributions included");

        a.put(k, third.state().toBuilder().contributors(List.of()).build(), TTL);
        assertEquals("1|null", stored(k), "a state without contributions is layout 1 again");
        assertEquals(third.state().toBuilder().contributors(List.of()).build(), readByThePreviousRelease(k).live());
    }

    /**
     * put and get keep contributions beside a window and a mode (layout 3 whatever else the state has); a state
     * without them keeps layout 1 or 2 and no {@code contributors} field.
     */
    @Test
    void putAndGetKeepContributionsAndLeaveTheEarlierLayoutsAsTheyWere() {
        DynamoDbStore s = store();
        List<Contribution> two = List.of(new Contribution("B", 1, 1, T0 + 2), new Contribution("A", 2, 2, T0 + 1));
        BreakerState rich = new BreakerState(3, 1_234_567L, true, 2_345_678L, 2, 0.1 + 0.2, 17L, 1, false, 9L);
        BreakerState windowed = rich.toBuilder()
                .window(SlidingWindow.empty(SlidingWindowType.COUNT_BASED, 5).record(false, false, T0)).build();
        record Case(String key, BreakerState state, String stored) {
        }
        List<Case> cases = List.of(
                new Case(key("plain"), rich, "1|null"),
                new Case(key("mode"), rich.toBuilder().mode(BreakerMode.NORMAL).build(), "2|null"),
                new Case(key("window"), windowed, "2|null"),
                new Case(key("plain+"), rich.toBuilder().contributors(two).build(),
                        "3|B,1,1,1764900000002;A,2,2,1764900000001"),
                new Case(key("window+"), windowed.toBuilder().mode(BreakerMode.NORMAL).contributors(two).build(),
                        "3|B,1,1,1764900000002;A,2,2,1764900000001"));
        for (Case c : cases) {
            s.put(c.key, c.state, TTL);
            assertEquals(Optional.of(c.state), s.get(c.key), c.key);
            assertEquals(c.stored, stored(c.key), c.key);
            assertEquals(Items.layoutOf(c.state), Integer.parseInt(item(c.key).get(Items.LAYOUT).n()), c.key);
        }
    }

    /**
     * Items of layouts 1 and 2 as the release before quorums wrote them (no {@code contributors} field) are read
     * as they were, with no contributions; a quorum's outcome on one of them keeps its window and mode and
     * writes layout 3; a forced close, which drops the contributions, writes layout 1 again.
     */
    @Test
    void itemsOfTheReleaseBeforeQuorumsAreStillReadAndAQuorumsOutcomeMakesThemLayout3() {
        DynamoDbStore s = store();
        BreakerState counted = new BreakerState(2, 1000, false, 0, 0, 0, 7, 0, false, 5);
        BreakerState moded = BreakerState.INITIAL.toBuilder().mode(BreakerMode.NORMAL).version(6).build();
        String one = key("layout1");
        String two = key("layout2");
        writeAsThePreviousRelease(one, counted, Items.LAYOUT_1);
        writeAsThePreviousRelease(two, moded, Items.LAYOUT_2);
        assertEquals(Optional.of(counted), s.get(one));
        assertEquals(Optional.of(moded), s.get(two));

        Policy p = quorum();
        BreakerState recorded = s.apply(one, AtomicOperation.outcome(false, false, "A"), p, T0).state();
        assertEquals(List.of(new Contribution("A", 1, 1, T0)), recorded.contributors());
        assertEquals(3, recorded.failures(), "the count stored by the earlier release goes on");
        assertEquals(Optional.of(recorded), s.get(one));
        assertEquals("3|A,1,1,1764900000000", stored(one));

        BreakerState modedNow = s.apply(two, AtomicOperation.outcome(false, false, "B"), p, T0).state();
        assertEquals(BreakerMode.NORMAL, modedNow.mode(), "the stored mode is kept beside the contributions");
        assertEquals("3|B,1,1,1764900000000", stored(two));
        assertEquals("1", item(two).get(Items.STATE).m().get(StateCodec.MODE).s());

        s.apply(one, AtomicOperation.force(BreakerStatus.CLOSED), p, T0 + 1);
        assertEquals("1|null", stored(one), "a forced close clears the contributions: layout 1");
        assertTrue(readByThePreviousRelease(one).live().contributors().isEmpty());
    }

    /** An item with the attributes the release before quorums wrote for {@code state} in {@code layout}. */
    private static void writeAsThePreviousRelease(String name, BreakerState state, int layout) {
        Map<String, AttributeValue> st = new LinkedHashMap<>();
        StateCodec.toFields(state).forEach((f, v) -> st.put(f, Items.s(v)));
        assertFalse(st.containsKey(StateCodec.CONTRIBUTORS));
        Map<String, AttributeValue> it = new HashMap<>();
        it.put(Items.PK, Items.s(Keys.partitionKey(name)));
        it.put(Items.OP, Items.s(name));
        it.put(Items.LAYOUT, Items.n(layout));
        it.put(Items.STATE, AttributeValue.builder().m(st).build());
        it.put(Items.VERSION, Items.n(state.version()));
        it.put(Items.WRITES, Items.n(4));
        it.put(Items.CLAIMS, AttributeValue.builder().m(Map.of()).build());
        DB.raw().putItem(r -> r.tableName(TABLE).item(it));
    }

    /**
     * A {@code contributors} field the store did not write is a malformed item, like an undecodable window: get
     * and every atomic operation fail with a {@link StoreException} naming the key, and leave the item as it was.
     * That is an undecodable or invalid value (failures above calls, one instance twice, an invalid instance id,
     * more than 16 instances, a field that is not a string), an empty one (the store writes none), contributions
     * in layout 1 or 2 (the release before quorums reads those and would drop them), and a layout 3 without them.
     */
    @Test
    void aContributorsFieldTheStoreDidNotWriteIsMalformedAndLeftAsItWas() {
        DynamoDbStore s = store();
        Policy p = quorum();
        StringBuilder seventeen = new StringBuilder();
        for (int i = 0; i < BreakerState.MAX_CONTRIBUTORS + 1; i++) {
            seventeen.append(i == 0 ? "" : ";").append("i").append(i).append(",1,1,").append(T0 - i);
        }
        record Corruption(String what, int layout, AttributeValue contributors) {
        }
        List<Corruption> corruptions = List.of(
                new Corruption("garbage", 3, Items.s("garbage")),
                new Corruption("failures above calls", 3, Items.s("A,3,2,5")),
                new Corruption("one instance twice", 3, Items.s("A,1,1,5;A,1,1,6")),
                new Corruption("an invalid instance id", 3, Items.s("A B,1,1,5")),
                new Corruption("not a number", 3, Items.s("A,1,x,5")),
                new Corruption("seventeen instances", 3, Items.s(seventeen.toString())),
                new Corruption("not a string", 3, Items.n(5)),
                new Corruption("empty", 3, Items.s("")),
                new Corruption("layout 3 without contributions", 3, null),
                new Corruption("contributions in layout 1", 1, Items.s("A,1,1,5")),
                new Corruption("contributions in layout 2", 2, Items.s("A,1,1,5")));
        for (Corruption c : corruptions) {
            String k = key("corrupt-" + c.what);
            s.put(k, new BreakerState(1, 1000, false, 0, 0, 0, 1, 0, false, 3), TTL);
            Map<String, AttributeValue> it = new HashMap<>(item(k));
            Map<String, AttributeValue> st = new LinkedHashMap<>(it.get(Items.STATE).m());
            if (c.layout == Items.LAYOUT_2) {
                st.put(StateCodec.MODE, Items.s("1"));
            }
            if (c.contributors != null) {
                st.put(StateCodec.CONTRIBUTORS, c.contributors);
            }
            it.put(Items.STATE, AttributeValue.builder().m(st).build());
            it.put(Items.LAYOUT, Items.n(c.layout));
            DB.raw().putItem(r -> r.tableName(TABLE).item(it));
            Map<String, AttributeValue> before = item(k);

            StoreException read = assertThrows(StoreException.class, () -> s.get(k), c.what);
            assertTrue(read.getMessage().contains("malformed"), c.what + ": " + read.getMessage());
            assertTrue(read.getMessage().contains(k), c.what + ": the key is named: " + read.getMessage());
            StoreException atomic = assertThrows(StoreException.class,
                    () -> s.apply(k, AtomicOperation.outcome(false, false, "A"), p, T0), c.what);
            assertTrue(atomic.getMessage().contains(k), c.what + ": " + atomic.getMessage());
            assertThrows(StoreException.class, () -> s.apply(k, AtomicOperation.force(BreakerStatus.CLOSED), p, T0),
                    c.what);
            assertEquals(before, item(k), "left as it was: " + c.what);
        }
    }

    /**
     * Random outcomes of three instances through two clients, with operator changes and other writes in between
     * (claims, a release, a window's slow call), under a consecutive and a time-window quorum: after every write
     * the stored state equals what the rule gives in Java from the previous state, and the item's layout and
     * {@code contributors} field follow it (layout 3 exactly while there are contributions). Claims and their
     * release, which do not rewrite the state, keep the field and the layout.
     */
    @Test
    void everyWriteKeepsTheContributionsAndTheLayoutFollowsTheState() {
        DynamoDbStore[] both = {store(), store()};
        long seed = Long.getLong("redeye.seed", System.nanoTime());
        Random rnd = new Random(seed);
        List<Policy> policies = List.of(quorum(), Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, 2)
                .minimumNumberOfCalls(4).failureRateThreshold(50).quorum(2).jitter(0).build());
        for (Policy p : policies) {
            String k = key("parity-" + p.strategy());
            BreakerState model = null;
            long now = T0;
            for (int i = 0; i < 60; i++) {
                String where = "seed " + seed + ", " + p.strategy() + ", step " + i;
                now += rnd.nextInt(700);
                AtomicOperation op;
                int pick = rnd.nextInt(20);
                if (pick == 0) {
                    op = AtomicOperation.force(BreakerStatus.CLOSED);
                } else if (pick == 1 && model != null && model.open()) {
                    op = AtomicOperation.trialSucceeded(model.version());
                } else if (pick == 2) {
                    op = AtomicOperation.slowCall();
                } else {
                    op = AtomicOperation.outcome(rnd.nextInt(3) == 0, false, "pod-" + rnd.nextInt(3));
                }
                StateChange expected = op.apply(model, p, now);
                StateChange got = both[i % 2].apply(k, op, p, now);
                assertEquals(expected.transition(), got.transition(), where + " " + op);
                assertEquals(expected.state().contributors(), got.state().contributors(), where + " " + op);
                model = both[(i + 1) % 2].get(k).orElse(null);
                if (model == null) {
                    assertFalse(expected.changed(), where + ": nothing stored, and the rule changed nothing");
                    continue;
                }
                assertEquals(expected.state().toBuilder().version(model.version()).build(), model, where + " " + op);
                String contributors = model.contributors().isEmpty() ? null
                        : Contribution.encodeAll(model.contributors());
                assertEquals(Items.layoutOf(model) + "|" + contributors, stored(k), where);
                assertEquals(!model.contributors().isEmpty(), Items.layoutOf(model) == Items.LAYOUT_3, where);
                if (rnd.nextInt(8) == 0) {
                    String before = stored(k);
                    DynamoDbStore other = both[(i + 1) % 2];
                    both[i % 2].claimTrial(k, 1, TTL).ifPresent(t -> other.releaseTrial(k, t));
                    assertEquals(before, stored(k), where + ": a claim and its release keep the state's fields");
                }
            }
        }
    }

    /**
     * Eight threads over two clients, two per instance, record failures under a quorum whose threshold is never
     * reached: afterwards each instance's contribution holds every one of its failures, exactly. Every such write
     * moves the write counter the conditional write compares, so a concurrent one retries instead of being
     * overwritten (the same race through get-then-put loses contributions, below).
     */
    @Test
    void contributionsOfEightThreadsOverTwoClientsAreCountedExactly() throws Exception {
        DynamoDbStore[] both = {store(), store()};
        String k = key("storm");
        Policy p = Policy.builder().failureThreshold(1_000_000).quorum(2).jitter(0).build();
        int threads = 8;
        int each = 20;
        Race.run(threads, Duration.ofMinutes(3), t -> {
            for (int i = 0; i < each; i++) {
                both[t % 2].apply(k, AtomicOperation.outcome(false, false, "pod-" + t / 2), p, T0 + i);
            }
        });
        BreakerState s = both[0].get(k).orElseThrow();
        assertEquals(threads * each, s.failures());
        assertEquals(threads / 2, s.contributors().size(), s.contributors().toString());
        for (Contribution c : s.contributors()) {
            assertEquals(2 * each, c.failures(), c.toString());
            assertEquals(2 * each, c.calls(), c.toString());
        }
        long lost = both[0].usage().conditionFailures() + both[1].usage().conditionFailures();
        assertTrue(lost > 0, "8 threads on one item must have lost conditions (else the race proved nothing)");
    }

    /** The same race through get-then-put (no condition) loses contributions: what the condition prevents. */
    @Test
    void theSameRaceThroughGetThenPutLosesContributions() throws Exception {
        DynamoDbStore[] both = {store(), store()};
        String k = key("naive");
        Policy p = Policy.builder().failureThreshold(1_000_000).quorum(2).jitter(0).build();
        int threads = 8;
        int each = 20;
        Race.run(threads, Duration.ofMinutes(3), t -> {
            for (int i = 0; i < each; i++) {
                BreakerState cur = both[t % 2].get(k).orElse(null);
                both[t % 2].put(k, Transitions.recordOutcome(cur, false, false, p, T0 + i, "pod-" + t / 2).state(),
                        TTL);
            }
        });
        int counted = 0;
        for (Contribution c : both[0].get(k).orElseThrow().contributors()) {
            counted += c.failures();
        }
        assertTrue(counted < threads * each, "get-then-put under 8 threads kept all " + counted + " failures: the "
                + "race is not a race");
    }
}
