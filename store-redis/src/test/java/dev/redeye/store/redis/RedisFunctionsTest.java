package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.testsupport.RedisProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPooled;

/**
 * How the Lua library runs, on private redis-servers: as a Redis Function library loaded once (FUNCTION LOAD)
 * and called with FCALL, loaded again after FUNCTION FLUSH; as EVAL scripts where the server has no FCALL
 * (renamed away here, as on Redis before 7), or where an ACL refuses FCALL or FUNCTION LOAD, loaded again after
 * SCRIPT FLUSH; and two versions of the library side by side, as during a rolling upgrade.
 */
class RedisFunctionsTest {
    private RedisProcess server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private Map<String, Long> calls(Jedis admin) {
        Map<String, Long> m = new TreeMap<>();
        for (String line : admin.info("commandstats").split("\r\n")) {
            if (line.startsWith("cmdstat_")) {
                String name = line.substring("cmdstat_".length(), line.indexOf(':'));
                m.put(name, Long.parseLong(line.replaceAll("^[^:]*:calls=(\\d+),.*", "$1")));
            }
        }
        return m;
    }

    /** Every function of the library, twice. */
    private static void exercise(RedisStore store, String op) {
        Policy p = Policy.builder().failureThreshold(100).build();
        for (int i = 0; i < 2; i++) {
            store.apply(op, AtomicOperation.failure(), p, 1 + i);
            String token = store.claimTrial(op, 2, Duration.ofSeconds(5)).orElseThrow();
            store.releaseTrial(op, token);
            store.put(op + "-put", BreakerState.INITIAL, Duration.ofMinutes(1));
            store.apply(op + "-forced", AtomicOperation.force(dev.redeye.api.BreakerStatus.FORCED_OPEN), p, 1 + i); // publishes
        }
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void afterFunctionFlushOrScriptFlushTheLibraryIsLoadedAgain(LuaRunner.Mode mode) {
        server = RedisProcess.start();
        try (JedisPooled jedis = new JedisPooled("127.0.0.1", server.port());
                Jedis admin = new Jedis("127.0.0.1", server.port());
                RedisStore store = RedisStore.builder(jedis).prefix("fn:").scripting(mode).build()) {
            Policy p = Policy.builder().failureThreshold(100).build();
            for (int i = 1; i <= 4; i++) {
                admin.functionFlush();
                admin.scriptFlush();
                assertEquals(i, store.apply("op", AtomicOperation.failure(), p, i).state().failures());
                admin.functionFlush();
                admin.scriptFlush();
                assertTrue(store.claimTrial("op" + i, 1, Duration.ofSeconds(5)).isPresent());
            }
            boolean functions = mode == LuaRunner.Mode.AUTO;
            assertEquals(functions, !admin.functionList().isEmpty(), "the library is loaded as a Function: " + mode);
            Map<String, Long> c = calls(admin);
            assertEquals(functions, c.containsKey("fcall"), c.toString());
            assertEquals(!functions, c.containsKey("evalsha"), c.toString());
        }
    }

    @Test
    void aServerWithoutFcallRunsTheLibraryAsScripts() {
        server = RedisProcess.start("--rename-command", "FCALL", "");
        try (RedisStore store = RedisStore.open(server.url() + "?prefix=fn:");
                Jedis admin = new Jedis("127.0.0.1", server.port())) {
            exercise(store, "op");
            assertEquals(2, store.get("op").orElseThrow().failures());
            Map<String, Long> c = calls(admin);
            assertFalse(c.containsKey("function|load"), "nothing loaded for FCALL that cannot run: " + c);
            assertTrue(c.get("evalsha") >= 10, c.toString());
        }
    }

    @Test
    void anAclRefusingFunctionLoadOrFcallLeavesScripts() {
        server = RedisProcess.start();
        try (Jedis admin = new Jedis("127.0.0.1", server.port())) {
            admin.aclSetUser("noload", "reset", "on", ">pw", "~*", "&*", "+@all", "-function");
            admin.aclSetUser("nofcall", "reset", "on", ">pw", "~*", "&*", "+@all", "-fcall");
            for (String user : List.of("noload", "nofcall")) {
                try (RedisStore store = RedisStore.open("redis://" + user + ":pw@127.0.0.1:" + server.port()
                        + "?prefix=" + user + ":")) {
                    exercise(store, user);
                    assertEquals(2, store.get(user).orElseThrow().failures(), user);
                }
            }
            assertTrue(admin.functionList().isEmpty(), "neither could load the library");
        }
    }

    @Test
    void twoVersionsOfTheLibraryRunSideBySide() {
        server = RedisProcess.start();
        LuaLibrary older = LuaLibrary.of("older", LuaLibrary.standard().body() + "\n-- an older version\n");
        try (JedisPooled a = new JedisPooled("127.0.0.1", server.port());
                JedisPooled b = new JedisPooled("127.0.0.1", server.port());
                Jedis admin = new Jedis("127.0.0.1", server.port());
                RedisStore current = RedisStore.builder(a).prefix("v:").build();
                RedisStore old = RedisStore.builder(b).prefix("v:").library(older).build()) {
            Policy p = Policy.builder().failureThreshold(100).build();
            for (int i = 1; i <= 3; i++) {
                assertEquals(2 * i - 1, current.apply("op", AtomicOperation.failure(), p, i).state().failures());
                assertEquals(2 * i, old.apply("op", AtomicOperation.failure(), p, i).state().failures());
            }
            assertEquals(2, admin.functionList().size(), "each version loaded its own library, neither replaced");
        }
    }
}
