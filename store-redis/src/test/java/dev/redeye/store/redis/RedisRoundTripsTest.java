package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.support.StateCodec;
import dev.redeye.testsupport.RedisProcess;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.StreamEntryID;
import redis.clients.jedis.resps.StreamEntry;

/**
 * What the record path sends, counted by the server ({@code INFO commandstats} of a private redis-server, so no
 * other client's commands count): a failure is one FCALL (the library is loaded once, with FUNCTION LOAD) and
 * three commands inside it; an automatic transition is one FCALL too when the state function appends its event
 * ({@code publishInScript}, on for a standalone server opened from a URI), two without; either way the stream
 * entry is the event {@code StateCodec} writes. A sub-threshold failure writes only the fields that changed. A
 * batch of outcomes, 1,024 of them included, is one FCALL of one GET and one SET (none when it changes nothing),
 * its opening's event appended in the same call.
 * Without Functions (EVAL scripts) the counts are the same in EVALSHA.
 */
class RedisRoundTripsTest {
    private RedisProcess server;
    private Jedis admin;

    @BeforeEach
    void start() {
        server = RedisProcess.start();
        admin = new Jedis("127.0.0.1", server.port());
    }

    @AfterEach
    void stop() {
        admin.close();
        server.close();
    }

    /** Calls per command since the last reset, e.g. {@code fcall -> 1}, but the reset itself and INFO. */
    private Map<String, Long> calls() {
        Map<String, Long> m = new TreeMap<>();
        for (String line : admin.info("commandstats").split("\r\n")) {
            if (line.startsWith("cmdstat_")) {
                String name = line.substring("cmdstat_".length(), line.indexOf(':'));
                String calls = line.substring(line.indexOf("calls=") + 6, line.indexOf(',', line.indexOf("calls=")));
                if (!name.equals("config|resetstat") && !name.equals("info")) {
                    m.put(name, Long.parseLong(calls));
                }
            }
        }
        return m;
    }

    private void reset() {
        admin.configResetStat();
    }

    @Test
    void aFailureIsOneFcallOfThreeCommandsAndTheOpeningOneFcallOnAStandaloneServer() {
        try (RedisStore store = RedisStore.open(server.url() + "?prefix=rt:")) {
            Policy p = Policy.builder().failureThreshold(2).build();
            Policy many = Policy.builder().failureThreshold(100).build();
            store.apply("sub", AtomicOperation.failure(), many, 1); // loads the library, starts the key's life
            assertEquals(1L, calls().get("function|load"), "the library is loaded once: " + calls());
            store.apply("warm", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 1); // a forced change's event, by a second call
            reset();
            StateChange sub = store.apply("sub", AtomicOperation.failure(), many, 2);
            assertEquals(null, sub.transition());
            assertEquals(2, sub.state().failures());
            Map<String, Long> c = calls();
            assertEquals(Map.of("fcall", 1L, "get", 1L, "set", 1L), c,
                    "one FCALL per failure: the state value is read inside it (GET) and written whole with its ttl"
                            + " (SET PX); no event below the threshold");
            store.apply("sub", AtomicOperation.success(), many, 3); // clears the failures
            reset();
            StateChange none = store.apply("sub", AtomicOperation.success(), many, 4);
            assertEquals(false, none.changed());
            assertEquals(Map.of("fcall", 1L, "get", 1L), calls(), "a success that changes nothing writes nothing");

            store.apply("op", AtomicOperation.failure(), p, 5);
            reset();
            StateChange opened = store.apply("op", AtomicOperation.failure(), p, 6);
            assertEquals(TransitionKind.OPENED, opened.transition());
            c = calls();
            assertEquals(1L, c.get("fcall"), "the opening appends its event in the same call: " + c);
            assertEquals(1L, c.get("xadd"), c.toString());
            assertEvent(store, opened, "op", 6);

            reset();
            StateChange forced = store.apply("op", AtomicOperation.force(BreakerStatus.CLOSED), p, 7);
            assertEquals(TransitionKind.FORCED_CLOSED, forced.transition());
            assertEquals(2L, calls().get("fcall"), "a forced change is published by a second call");
        }
    }

    @Test
    void asEvalScriptsTheCountsAreTheSameInEvalsha() {
        try (JedisPooled jedis = new JedisPooled("127.0.0.1", server.port());
                RedisStore store = RedisStore.builder(jedis).prefix("rt4:").publishInScript(true)
                        .scripting(LuaRunner.Mode.SCRIPTS).build()) {
            Policy many = Policy.builder().failureThreshold(100).build();
            store.apply("sub", AtomicOperation.failure(), many, 1); // loads the state function's script
            reset();
            assertEquals(2, store.apply("sub", AtomicOperation.failure(), many, 2).state().failures());
            assertEquals(Map.of("evalsha", 1L, "get", 1L, "set", 1L), calls());
        }
    }

    @Test
    void withoutPublishInScriptTheOpeningIsTwoCallsAndTheSameEvent() {
        try (JedisPooled jedis = new JedisPooled("127.0.0.1", server.port());
                RedisStore store = RedisStore.builder(jedis).prefix("rt2:").build()) {
            Policy p = Policy.builder().failureThreshold(1).build();
            store.apply("warm", AtomicOperation.failure(), p, 1); // loads the library (an opening, published by a second call)
            reset();
            StateChange opened = store.apply("op", AtomicOperation.failure(), p, 5);
            assertEquals(TransitionKind.OPENED, opened.transition());
            Map<String, Long> c = calls();
            assertEquals(2L, c.get("fcall"), "the state function, then publish: " + c);
            assertEvent(store, opened, "op", 5);
        }
    }

    @Test
    void aFailureChangesOnlyTheFieldsItCountsAndPassesTheOthersThroughAsStored() {
        try (RedisStore store = RedisStore.open(server.url() + "?prefix=rt3:")) {
            Policy p = Policy.builder().failureThreshold(10).build();
            String k = store.stateKey("op");
            store.apply("op", AtomicOperation.failure(), p, 1); // a new key: every field
            assertEquals("string", admin.type(k));
            // a field in a form every reader parses alike, but not the canonical one: the general path
            admin.set(k, RedisTestSupport.withField(admin.get(k), StateCodec.OPEN_COUNT, "+0"));
            reset();
            StateChange ch = store.apply("op", AtomicOperation.failure(), p, 2);
            assertEquals(2, ch.state().failures());
            assertEquals(Map.of("fcall", 1L, "get", 1L, "set", 1L), calls(), "one SET of the whole value");
            String v = admin.get(k);
            assertEquals("+0", RedisTestSupport.field(v, StateCodec.OPEN_COUNT), "passed through as stored");
            assertEquals("2", RedisTestSupport.field(v, StateCodec.FAILURES));
            assertEquals("2", RedisTestSupport.field(v, StateCodec.LAST_FAILURE_AT));
            assertEquals(ch.state(), store.get("op").orElseThrow());
            assertTrue(admin.pttl(k) > 0, "the ttl is refreshed");
        }
    }

    @Test
    void aBatchIsOneFcallOfOneGetAndOneSetAndItsOpeningAppendsTheEventInTheSameCall() {
        try (RedisStore store = RedisStore.open(server.url() + "?prefix=rt6:")) {
            Policy many = Policy.builder().failureThreshold(1_000).build();
            store.apply("b", AtomicOperation.failure(), many, 1); // loads the library, starts the key's life
            long[] packed = new long[AtomicOperation.MAX_BATCH];
            for (int i = 0; i < packed.length; i++) {
                packed[i] = AtomicOperation.packOutcome(i % 3 != 0, i % 4 == 0, 10 + i / 8);
            }
            reset();
            StateChange sub = store.apply("b", AtomicOperation.outcomes(packed, packed.length, null), many, 200);
            assertEquals(null, sub.transition());
            assertEquals(Map.of("fcall", 1L, "get", 1L, "set", 1L), calls(),
                    "1,024 outcomes: one FCALL reading the value once and writing it once");
            reset();
            long[] successes = {AtomicOperation.packOutcome(true, false, 300), AtomicOperation.packOutcome(true, true, 301)};
            store.apply("b", AtomicOperation.outcomes(successes, 2, null), many, 301); // clears the count
            StateChange none = store.apply("b", AtomicOperation.outcomes(successes, 2, null), many, 302);
            assertEquals(false, none.changed());
            assertEquals(2L, calls().get("fcall"));
            assertEquals(1L, calls().get("set"), "a batch that changes nothing writes nothing: " + calls());

            Policy p = Policy.builder().failureThreshold(3).build();
            long[] opening = new long[5];
            for (int i = 0; i < opening.length; i++) {
                opening[i] = AtomicOperation.packOutcome(false, false, 400 + i);
            }
            reset();
            StateChange opened = store.apply("o", AtomicOperation.outcomes(opening, opening.length, null), p, 404);
            assertEquals(TransitionKind.OPENED, opened.transition(), "the third failure opens");
            assertEquals(5, opened.state().failures(), "and the two after it count while open");
            assertEquals(402, opened.state().openedAt(), "at the third failure's instant");
            Map<String, Long> c = calls();
            assertEquals(1L, c.get("fcall"), "the opening appends its event in the same call: " + c);
            assertEquals(1L, c.get("xadd"), c.toString());
            assertEquals(1L, c.get("set"), c.toString());
            assertEvent(store, opened, "o", 404);
        }
    }

    @Test
    void getIsOneGetAndAHashOfAnEarlierReleaseOneHgetallMore() {
        try (RedisStore store = RedisStore.open(server.url() + "?prefix=rt5:")) {
            Policy p = Policy.builder().failureThreshold(10).build();
            StateChange ch = store.apply("op", AtomicOperation.failure(), p, 1);
            reset();
            assertEquals(ch.state(), store.get("op").orElseThrow());
            assertEquals(Map.of("get", 1L), calls());
            admin.del(store.stateKey("op"));
            admin.hset(store.stateKey("op"), StateCodec.toFields(ch.state()));
            reset();
            assertEquals(ch.state(), store.get("op").orElseThrow());
            assertEquals(Map.of("get", 1L, "hgetall", 1L), calls());
        }
    }

    /** The last stream entry is the event of {@code change}, exactly as StateCodec reads it. */
    private void assertEvent(RedisStore store, StateChange change, String op, long now) {
        List<StreamEntry> last = admin.xrevrange(store.feedKey(), StreamEntryID.MAXIMUM_ID, StreamEntryID.MINIMUM_ID, 1);
        assertEquals(1, last.size());
        TransitionEvent read = StateCodec.eventFromFields(last.get(0).getFields(), "test");
        assertEquals(change.toEvent(op, Policy.defaults(), now), read);
        assertTrue(admin.pttl(store.feedKey()) > 0, "the stream carries its clean-up ttl");
    }
}
