package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Contribution;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.StoreException;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.support.StateCodec;
import redis.clients.jedis.StreamEntryID;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.resps.StreamEntry;

/**
 * The stored form of a quorum's contributions ({@link BreakerState#contributors()}), against a real server: a state
 * with contributions is stored as its twelve fields (window and mode, empty and 0 when it has neither) and the
 * contributions' text ({@link Contribution#encodeAll}), on every path (the record and state functions, put, get,
 * the events appended in the function and from Java); a state without them keeps the ten- or twelve-field value,
 * exactly as the release before quorums wrote it, and that release's values are read and counted on. That
 * release's own library ({@code redeye-twelve-field-layout.lua}, kept as a test resource) refuses a value with
 * contributions ({@code REDEYE_MALFORMED}, a {@code StoreException} to its breakers), its put refuses one, and its
 * functions refuse a policy with a quorum ({@code REDEYE_BAD_ARGS}), each leaving the value as it was, rather than
 * read it without its contributions and write it back without them. Contributions the store did not write are
 * malformed to get and to every function, which leave them in place.
 */
class RedisQuorumLayoutTest extends WithRedisPrefix {
    private static final LuaLibrary PREVIOUS = LuaLibrary.load("redeye-twelve-field-layout.lua");
    private static final long T0 = 1_764_900_000_000L;
    private static final Duration TTL = Duration.ofHours(1);
    private static final Policy QUORUM = Policy.builder().failureThreshold(3).quorum(2).jitter(0.0).build();
    private static final Policy THREE = Policy.builder().failureThreshold(3).build();
    private static final Policy WINDOW = Policy.builder().strategy(Strategy.SLIDING_WINDOW)
            .slidingWindow(SlidingWindowType.COUNT_BASED, 10).minimumNumberOfCalls(5).build();

    private RedisStore store;

    @BeforeEach
    void setUp() {
        store = store(LuaRunner.Mode.AUTO, true);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private RedisStore store(LuaRunner.Mode mode, boolean publishInScript) {
        return RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true)
                .publishInScript(publishInScript).scripting(mode).build();
    }

    private static AtomicOperation failureOf(String instance) {
        return AtomicOperation.outcome(false, false, instance);
    }

    /** The comma-separated pieces of the value under {@code op}'s state key. */
    private int pieces(String op) {
        return raw.get(store.stateKey(op)).split(",", -1).length;
    }

    @Test
    void theStoreDeclaresQuorumState() {
        assertEquals(Optional.of(store), store.capability(QuorumState.class));
    }

    /**
     * Outcomes attributed to instances are stored with their contributions, read back equal by get and by a
     * second client, and carried by the opening's event, whether the function appends it (publishInScript) or
     * Java does; a success that clears the count starts the scope again with its instance; an operator's close
     * leaves none, and the ten-field value again.
     */
    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void contributionsAreStoredOnTheAtomicPathAndTravelInTheEvents(LuaRunner.Mode mode) {
        for (boolean inScript : List.of(true, false)) {
            String op = "k-" + inScript;
            try (RedisStore a = store(mode, inScript); RedisStore b = store(mode, inScript)) {
                a.apply(op, failureOf("A"), QUORUM, T0);
                StateChange second = a.apply(op, failureOf("A"), QUORUM, T0 + 1);
                assertEquals(List.of(new Contribution("A", 2, 2, T0 + 1)), second.state().contributors());
                String value = raw.get(a.stateKey(op));
                assertTrue(value.endsWith(",,0,A,2,2,1764900000001"), value);
                assertEquals(16, pieces(op), value);
                assertEquals(Optional.of(second.state()), b.get(op), "a second client reads the contributions");

                StateChange third = b.apply(op, failureOf("B"), QUORUM, T0 + 2);
                assertEquals(TransitionKind.OPENED, third.transition(), "A's and B's failures make the quorum of 2");
                assertTrue(raw.get(a.stateKey(op)).endsWith(",,0,B,1,1,1764900000002;A,2,2,1764900000001"),
                        raw.get(a.stateKey(op)));
                assertEquals(Optional.of(third.state()), a.get(op));
                StreamEntry last = raw.xrevrange(a.feedKey(), StreamEntryID.MAXIMUM_ID, StreamEntryID.MINIMUM_ID, 1)
                        .get(0);
                Map<String, String> fields = last.getFields();
                assertEquals("B,1,1,1764900000002;A,2,2,1764900000001", fields.get(StateCodec.CONTRIBUTORS));
                assertEquals(third.toEvent(op, QUORUM, T0 + 2), StateCodec.eventFromFields(fields, "test"),
                        "the event carries the state, contributions included (in the function: " + inScript + ")");
                assertEquals(StateCodec.eventToFields(third.toEvent(op, QUORUM, T0 + 2)).keySet(), fields.keySet(),
                        "StateCodec's fields, in the function and from Java");

                BreakerState closed = a.apply(op, AtomicOperation.force(BreakerStatus.CLOSED), QUORUM, T0 + 3).state();
                assertEquals(List.of(), closed.contributors(), "an operator's close ends the scope");
                assertEquals(10, pieces(op), "no contributions: the ten-field value");
                a.apply(op, failureOf("A"), QUORUM, T0 + 4);
                StateChange cleared = a.apply(op, AtomicOperation.outcome(true, false, "C"), QUORUM, T0 + 5);
                assertEquals(List.of(new Contribution("C", 0, 1, T0 + 5)), cleared.state().contributors(),
                        "a success that clears the count starts the scope again, with its instance");
                assertEquals(Optional.of(cleared.state()), b.get(op));
            }
        }
    }

    /**
     * put and get keep contributions beside a window and a mode; a state without them keeps the ten- or
     * twelve-field value. Contributions whose last time ends as a mode's code would (",2") are read as
     * contributions by get and by the functions.
     */
    @Test
    void putAndGetKeepContributionsAndLeaveTheEarlierValuesAsTheyWere() {
        List<Contribution> two = List.of(new Contribution("B", 1, 1, T0 + 2), new Contribution("A", 2, 2, T0 + 1));
        BreakerState rich = new BreakerState(2, T0, false, 0, 1, 0.25, 7, 0, false, 42);
        BreakerState windowed = rich.toBuilder()
                .window(SlidingWindow.empty(SlidingWindowType.COUNT_BASED, 5).record(false, false, T0)).build();
        record Case(String key, BreakerState state, int pieces) {
        }
        List<Case> cases = List.of(
                new Case("plain", rich, 10),
                new Case("mode", rich.toBuilder().mode(BreakerMode.NORMAL).build(), 12),
                new Case("window", windowed, 12),
                new Case("plain+", rich.toBuilder().contributors(two).build(), 19),
                new Case("window+", windowed.toBuilder().mode(BreakerMode.DISABLED).contributors(two).build(), 19),
                new Case("short-time+", rich.toBuilder().contributors(List.of(new Contribution("A", 1, 1, 2)))
                        .build(), 16));
        for (Case c : cases) {
            store.put(c.key, c.state, TTL);
            assertEquals(Optional.of(c.state), store.get(c.key), c.key);
            assertEquals(c.pieces, pieces(c.key), c.key + ": " + raw.get(store.stateKey(c.key)));
            assertEquals(RedisStore.value(c.state), raw.get(store.stateKey(c.key)), c.key);
        }
        assertTrue(raw.get(store.stateKey("short-time+")).endsWith(",,0,A,1,1,2"));
        StateChange next = store.apply("short-time+", failureOf("B"), QUORUM, 3);
        assertEquals(failureOf("B").apply(cases.get(5).state, QUORUM, 3), next);
        assertEquals(TransitionKind.OPENED, next.transition(), "A's contribution was read: B's failure opens");
    }

    /**
     * The release before quorums refuses a value with contributions, written by an outcome or by put: its state and
     * record functions answer REDEYE_MALFORMED and its put REDEYE_BAD_ARGS, leaving the value as it was; its
     * functions also refuse a policy with a quorum and an outcome's instance (REDEYE_BAD_ARGS).
     */
    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void theReleaseBeforeQuorumsRefusesAValueWithContributions(LuaRunner.Mode mode) {
        LuaRunner previous = new LuaRunner(raw, PREVIOUS, mode);
        store.apply("recorded", failureOf("A"), QUORUM, T0);
        store.put("put", new BreakerState(1, T0, false, 0, 0, 0, 0, 0, false, 9).toBuilder()
                .contributors(List.of(new Contribution("A", 1, 1, 2))).build(), TTL); // ends in ",2" as a mode would
        for (String op : List.of("recorded", "put")) {
            String k = store.stateKey(op);
            String value = raw.get(k);
            assertEquals(16, pieces(op), value);
            for (LuaLibrary.Fn fn : List.of(LuaLibrary.Fn.STATE, LuaLibrary.Fn.RECORD)) {
                for (String wireOp : List.of("failure", "success")) {
                    List<String> args = fn == LuaLibrary.Fn.RECORD
                            ? List.of(wireOp, "5", RedisStore.policyArgument(THREE))
                            : List.of(wireOp, "5", RedisStore.policyArgument(THREE), "", "0");
                    JedisDataException e = assertThrows(JedisDataException.class,
                            () -> previous.run(fn, List.of(k), args));
                    assertTrue(e.getMessage().startsWith("REDEYE_MALFORMED")
                            && e.getMessage().contains("16 comma-separated fields, not 10"), e.getMessage());
                }
            }
            JedisDataException put = assertThrows(JedisDataException.class,
                    () -> previous.run(LuaLibrary.Fn.PUT, List.of(k), List.of("60000", value)));
            assertTrue(put.getMessage().startsWith("REDEYE_BAD_ARGS"), put.getMessage());
            assertEquals(value, raw.get(k), "left as it was");
        }
        String k = store.stateKey("plain");
        store.apply("plain", AtomicOperation.failure(), THREE, T0);
        String value = raw.get(k);
        String quorum = RedisStore.policyArgument(QUORUM);
        for (List<String> args : List.of(List.of("failure", "5", quorum), List.of("failure", "5", quorum, "A"),
                List.of("failure", "5", RedisStore.policyArgument(THREE), "A"))) {
            JedisDataException e = assertThrows(JedisDataException.class,
                    () -> previous.run(LuaLibrary.Fn.RECORD, List.of(k), args));
            assertTrue(e.getMessage().startsWith("REDEYE_BAD_ARGS"), e.getMessage());
        }
        JedisDataException e = assertThrows(JedisDataException.class, () -> previous.run(LuaLibrary.Fn.STATE,
                List.of(k), List.of("failure", "5", quorum, "", "0")));
        assertTrue(e.getMessage().startsWith("REDEYE_BAD_ARGS"), e.getMessage());
        assertEquals(value, raw.get(k), "left as it was");
    }

    /**
     * The values the release before quorums writes (ten fields, and twelve with a window) are read by this release
     * and counted on; an outcome under a quorum adds its contribution; an outcome without one leaves the value in
     * the form that release reads, and it goes on counting on it.
     */
    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void valuesOfTheReleaseBeforeQuorumsAreReadAndCountedOn(LuaRunner.Mode mode) {
        LuaRunner previous = new LuaRunner(raw, PREVIOUS, mode);
        String plain = store.stateKey("plain");
        previous.run(LuaLibrary.Fn.RECORD, List.of(plain), List.of("failure", "1", RedisStore.policyArgument(THREE)));
        String windowed = store.stateKey("windowed");
        previous.run(LuaLibrary.Fn.RECORD, List.of(windowed), List.of("failure", "1",
                RedisStore.policyArgument(WINDOW)));
        assertEquals(10, pieces("plain"));
        assertEquals(12, pieces("windowed"));
        BreakerState p = store.get("plain").orElseThrow();
        assertEquals(1, p.failures());
        BreakerState w = store.get("windowed").orElseThrow();
        assertEquals("c10.1.1", w.window().encode());

        StateChange counted = store.apply("plain", AtomicOperation.failure(), THREE, 2);
        assertEquals(AtomicOperation.failure().apply(p, THREE, 2), counted);
        assertEquals(10, pieces("plain"), "without a quorum the value keeps the form the release before reads");
        previous.run(LuaLibrary.Fn.RECORD, List.of(plain), List.of("success", "3", RedisStore.policyArgument(THREE)));
        assertEquals(0, store.get("plain").orElseThrow().failures(), "and that release counts on it");

        Policy windowQuorum = WINDOW.toBuilder().quorum(2).build();
        StateChange attributed = store.apply("windowed", failureOf("A"), windowQuorum, 2);
        assertEquals(failureOf("A").apply(w, windowQuorum, 2), attributed);
        assertEquals(List.of(new Contribution("A", 1, 1, 2)), attributed.state().contributors());
        assertEquals(16, pieces("windowed"));
    }

    /**
     * Contributions the store did not write are malformed, like an undecodable window: get and every function
     * (an attributed outcome under a quorum, an outcome and a slow call without one, an operator's change) fail
     * with StoreException and leave the value as it was.
     */
    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void malformedContributionsAreAStoreExceptionAndAreLeftAlone(LuaRunner.Mode mode) {
        StringBuilder seventeen = new StringBuilder();
        for (int i = 0; i < 17; i++) {
            seventeen.append(i == 0 ? "" : ";").append("i").append(i).append(",1,1,5");
        }
        List<String> corruptions = List.of("garbage", "A,3,2,5", "A,1,1,5;A,1,1,6", "A B,1,1,5", "", "A,1,1",
                "A,1,1,5;", "A,-1,1,5", "A,1,1,x", "A,1,2147483648,5", "x".repeat(65) + ",1,1,5", "A,1,1,5,",
                "A,1,1,2,", seventeen.toString(), "B,1,1,5;B,1,1,6", "B,1,1,5;A,1,1,5;B,1,1,6");
        Policy windowQuorum = WINDOW.toBuilder().quorum(2).build();
        try (RedisStore s = store(mode, true)) {
            for (Policy p : List.of(QUORUM, windowQuorum)) {
                s.apply("src", failureOf("A"), p, 1);
                String good = raw.get(s.stateKey("src"));
                String head = good.substring(0, good.lastIndexOf(",A,1,1,1"));
                for (String bad : corruptions) {
                    String k = s.stateKey("bad");
                    String value = head + "," + bad;
                    raw.set(k, value);
                    StoreException e = assertThrows(StoreException.class, () -> s.get("bad"), value);
                    assertTrue(e.getMessage().contains("malformed"), e.getMessage());
                    for (AtomicOperation o : List.of(failureOf("A"), AtomicOperation.failure(),
                            AtomicOperation.slowCall(), AtomicOperation.force(BreakerStatus.FORCED_OPEN))) {
                        for (Policy under : List.of(p, p == QUORUM ? THREE : WINDOW)) {
                            assertThrows(StoreException.class, () -> s.apply("bad", o, under, 2),
                                    o + " under " + under + " on " + value);
                        }
                    }
                    assertEquals(value, raw.get(k), "left as it was");
                }
                s.delete("src");
            }
        }
    }

    /**
     * The quorum record path rewrites only the recording instance's part of the contributions' text and passes the
     * others through: whatever the recorder's place (first, between others, last, absent), whether the text was
     * written by this path or by another (put, whose text the path has not seen), and however often the same text
     * comes back, every reply equals {@code AtomicOperation.apply} on the state before it. A time window drops a
     * contribution that aged out of its span behind a fresh one (the recorder's own part the last writer's), and
     * the recorder's own part when it aged out.
     */
    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void theQuorumRecordPathRewritesTheRecordersPartWhereverItIs(LuaRunner.Mode mode) {
        Policy timeQuorum = Policy.builder().strategy(Strategy.SLIDING_WINDOW)
                .slidingWindow(SlidingWindowType.TIME_BASED, 10).minimumNumberOfCalls(100).quorum(2).build();
        Policy countQuorum = WINDOW.toBuilder().minimumNumberOfCalls(10).quorum(3).build();
        Policy consecutive = Policy.builder().failureThreshold(1000).quorum(2).build();
        try (RedisStore s = store(mode, true)) {
            for (Policy p : List.of(consecutive, countQuorum, timeQuorum)) {
                String op = "places-" + p.strategy() + "-" + p.slidingWindowType();
                // A at 0 s, then B, C, D each second: A is last; then the recorder first, in the middle, last
                List<String> steps = List.of("A@0", "B@1000", "C@2000", "D@3000", "D@3500", "B@4000", "A@5000",
                        "C@6000", "C@6000", "E@7000",
                        // 12.5 s: A (5 s), B (4 s) and D (3.5 s) aged out of 10 s; E, C fresh; E records first
                        "E@12500", "C@13000",
                        // 17.5 s: C (13 s) is fresh behind E (12.5 s): E records, C stays
                        "E@17500",
                        // 23.1 s: C aged out behind E; then F, new
                        "E@23100", "F@23200");
                BreakerState before = null;
                for (String step : steps) {
                    String instance = step.substring(0, step.indexOf('@'));
                    long now = T0 + Long.parseLong(step.substring(step.indexOf('@') + 1));
                    AtomicOperation o = failureOf(instance);
                    StateChange got = s.apply(op, o, p, now);
                    if (before == null) {
                        before = got.previous(); // a new key's first version is the store's
                    }
                    assertEquals(o.apply(before, p, now), got, step + " under " + p);
                    before = got.state();
                }
                if (p == timeQuorum) {
                    assertEquals(List.of("F", "E"), before.contributors().stream().map(Contribution::instance)
                            .toList(), "aged contributions dropped behind fresh ones");
                }
                // a text this path never wrote, put by another writer: read, checked and rewritten alike
                BreakerState put = before.toBuilder().contributors(List.of(new Contribution("X", 1, 2, T0 + 23_000),
                        new Contribution("E", 1, 1, T0 + 23_000), new Contribution("Y", 0, 1, T0 + 23_000))).build();
                s.put(op, put, TTL);
                StateChange got = s.apply(op, failureOf("E"), p, T0 + 23_300);
                assertEquals(failureOf("E").apply(put, p, T0 + 23_300), got, "after put under " + p);
            }
        }
    }

    /** A policy without a quorum sends the text it sent before quorums; one with a quorum two fields more. */
    @Test
    void onlyAPolicyWithAQuorumSendsTheQuorumFields() {
        List<String> lengths = new ArrayList<>();
        for (Policy p : List.of(THREE, WINDOW, QUORUM, WINDOW.toBuilder().quorumFraction(0.5).build(),
                THREE.toBuilder().quorum(1).build())) {
            lengths.add(p.quorumOn() + ":" + RedisStore.policyArgument(p).split(",", -1).length);
        }
        assertEquals(List.of("false:8", "false:13", "true:15", "true:15", "false:8"), lengths);
        assertTrue(RedisStore.policyArgument(WINDOW.toBuilder().quorumFraction(0.5).build()).endsWith(",0,0.5"));
        assertNull(store.get("none").orElse(null));
    }
}
