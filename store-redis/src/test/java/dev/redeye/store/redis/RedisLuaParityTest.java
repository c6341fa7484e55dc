package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.redeye.spi.Store;
import dev.redeye.tck.Rule;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckRunner;
import java.util.EnumSet;
import java.util.Map;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

/**
 * Parity of the Lua library's state and record functions ({@code redeye.lua}, run as a Redis Function on Redis 7) with
 * {@code Transitions} as a property rather than case by case: the TCK's
 * model rule R8.1 runs {@value #SEQUENCES} random sequences (recording under both strategies and gaps, trial
 * outcomes with current and stale versions, force, claims, put, delete, over two clients) against a real
 * redis-server, every result and stored state compared bit for bit with the Java model. It draws from its own
 * seed, so these are not the 100 sequences {@code RedisStoreTckTest} runs. About 20 s on a local server.
 */
class RedisLuaParityTest {
    static final int SEQUENCES = 2_000;
    static final long SEED = 1L;

    /** Clients of one fresh prefix, each with its own pool, as {@code Stores.open} would give. */
    static Store client(String prefix) {
        String url = RedisTestSupport.url();
        return RedisStore.open(url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix);
    }

    /**
     * A client that runs the library as EVAL scripts, as on a server without Redis Functions (the same body,
     * wrapped once per function), publishing in the state function like a URI store on a standalone server.
     */
    static Store scriptsClient(String prefix) {
        RedisStoreProvider.Parsed p = RedisStoreProvider.parse(RedisTestSupport.url());
        return RedisStore.builder(new JedisPooled(p.address(), p.config())).prefix(prefix).closeClient(true)
                .feedConnection(p.address(), p.config()).publishInScript(true).scripting(LuaRunner.Mode.SCRIPTS).build();
    }

    @Test
    void stateLuaMatchesTransitionsOnThousandsOfRandomSequences() {
        String prefix = RedisTestSupport.newPrefix();
        assertParity(() -> client(prefix), prefix, SEQUENCES);
    }

    @Test
    void runAsEvalScriptsTheLibraryMatchesTransitionsToo() {
        String prefix = RedisTestSupport.newPrefix();
        assertParity(() -> scriptsClient(prefix), prefix, SEQUENCES / 10);
    }

    private static void assertParity(java.util.function.Supplier<Store> clients, String prefix, int sequences) {
        try (JedisPooled raw = RedisTestSupport.raw()) {
            try {
                TckReport report = TckRunner.run(clients, EnumSet.of(Rule.R8_1), Map.of(
                        TckRunner.TRIES_PARAMETER, Integer.toString(sequences),
                        TckRunner.SEED_PARAMETER, Long.toString(SEED)));
                assertEquals(TckReport.Status.PASSED, report.result(Rule.R8_1).orElseThrow().status(),
                        report.format());
            } finally {
                RedisTestSupport.deleteAll(raw, prefix);
            }
        }
    }
}
