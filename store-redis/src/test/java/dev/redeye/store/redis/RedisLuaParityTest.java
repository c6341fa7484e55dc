package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.redeye.api.Store;
import dev.redeye.tck.Rule;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckRunner;
import java.util.EnumSet;
import java.util.Map;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

/**
 * Parity of {@code state.lua} with {@code Transitions} as a property rather than case by case: the TCK's
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

    @Test
    void stateLuaMatchesTransitionsOnThousandsOfRandomSequences() {
        String prefix = RedisTestSupport.newPrefix();
        try (JedisPooled raw = RedisTestSupport.raw()) {
            try {
                TckReport report = TckRunner.run(() -> client(prefix), EnumSet.of(Rule.R8_1), Map.of(
                        TckRunner.TRIES_PARAMETER, Integer.toString(SEQUENCES),
                        TckRunner.SEED_PARAMETER, Long.toString(SEED)));
                assertEquals(TckReport.Status.PASSED, report.result(Rule.R8_1).orElseThrow().status(),
                        report.format());
            } finally {
                RedisTestSupport.deleteAll(raw, prefix);
            }
        }
    }
}
