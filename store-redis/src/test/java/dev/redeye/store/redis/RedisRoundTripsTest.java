package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.StateCodec;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
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
 * other client's commands count): a failure is one EVALSHA; an automatic transition is one EVALSHA too when the
 * state script appends its event ({@code publishInScript}, on for a standalone server opened from a URI), two
 * without; either way the stream entry is the event {@code StateCodec} writes. A sub-threshold failure writes
 * only the fields that changed.
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

    /** Calls per command since the last reset, e.g. {@code evalsha -> 1}. */
    private Map<String, Long> calls() {
        Map<String, Long> m = new TreeMap<>();
        for (String line : admin.info("commandstats").split("\r\n")) {
            if (line.startsWith("cmdstat_")) {
                String name = line.substring("cmdstat_".length(), line.indexOf(':'));
                String calls = line.substring(line.indexOf("calls=") + 6, line.indexOf(',', line.indexOf("calls=")));
                m.put(name, Long.parseLong(calls));
            }
        }
        return m;
    }

    private void reset() {
        admin.configResetStat();
    }

    @Test
    void aFailureIsOneEvalshaAndSoIsTheOpeningOnAStandaloneServer() {
        try (RedisStore store = RedisStore.open(server.url() + "?prefix=rt:")) {
            Policy p = Policy.builder().failureThreshold(2).build();
            store.recordFailure("op", p, 1); // loads state.lua
            store.force("warm", BreakerStatus.FORCED_OPEN, p, 1); // and publish.lua (a forced change's event)
            reset();
            StateChange sub = store.recordFailure("other", p, 1);
            assertEquals(null, sub.transition());
            Map<String, Long> c = calls();
            assertEquals(1L, c.get("evalsha"), "one EVALSHA per failure: " + c);
            assertEquals(null, c.get("xadd"), "no event below the threshold: " + c);
            assertEquals(1L, c.get("hmget"), "the state is read inside the script, not before it: " + c);

            reset();
            StateChange opened = store.recordFailure("op", p, 2);
            assertEquals(TransitionKind.OPENED, opened.transition());
            c = calls();
            assertEquals(1L, c.get("evalsha"), "the opening appends its event in the same script: " + c);
            assertEquals(1L, c.get("xadd"), c.toString());
            assertEvent(store, opened, "op", 2);

            reset();
            StateChange forced = store.force("op", BreakerStatus.CLOSED, p, 3);
            assertEquals(TransitionKind.FORCED_CLOSED, forced.transition());
            assertEquals(2L, calls().get("evalsha"), "a forced change is published by a second call");
        }
    }

    @Test
    void withoutPublishInScriptTheOpeningIsTwoCallsAndTheSameEvent() {
        try (JedisPooled jedis = new JedisPooled("127.0.0.1", server.port());
                RedisStore store = RedisStore.builder(jedis).prefix("rt2:").build()) {
            Policy p = Policy.builder().failureThreshold(1).build();
            store.recordFailure("warm", p, 1); // loads both scripts (an opening, published by a second call)
            reset();
            StateChange opened = store.recordFailure("op", p, 5);
            assertEquals(TransitionKind.OPENED, opened.transition());
            Map<String, Long> c = calls();
            assertEquals(2L, c.get("evalsha"), "state.lua, then publish.lua: " + c);
            assertEvent(store, opened, "op", 5);
        }
    }

    @Test
    void aSubThresholdFailureWritesOnlyTheFieldsThatChanged() {
        try (RedisStore store = RedisStore.open(server.url() + "?prefix=rt3:")) {
            Policy p = Policy.builder().failureThreshold(10).build();
            store.recordFailure("op", p, 1); // a new key: every field
            assertEquals(10, admin.hlen(store.stateKey("op")));
            admin.hset(store.stateKey("op"), StateCodec.OPEN_COUNT, "+0"); // parsed alike by every reader
            reset();
            StateChange ch = store.recordFailure("op", p, 2);
            assertEquals(2, ch.state().failures());
            // HSET of the two changed fields: the non-canonical field the script did not need to touch stays
            assertEquals("+0", admin.hget(store.stateKey("op"), StateCodec.OPEN_COUNT));
            assertEquals("2", admin.hget(store.stateKey("op"), StateCodec.FAILURES));
            assertEquals("2", admin.hget(store.stateKey("op"), StateCodec.LAST_FAILURE_AT));
            assertEquals(ch.state(), store.get("op").orElseThrow());
            assertTrue(admin.pttl(store.stateKey("op")) > 0, "the ttl is refreshed");
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
