package dev.redeye.store.redis;

import dev.redeye.testsupport.QuorumFleetScenario;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

/** Quorum opening over Redis with two instances in two JVM processes ({@link QuorumFleetScenario}). */
class RedisQuorumTwoProcessTest {
    @Test
    void anOutlierAloneLeavesTheFleetClosedAndASecondProcessMakesTheQuorum() throws Exception {
        String url = RedisTestSupport.url();
        String prefix = RedisTestSupport.newPrefix();
        try {
            QuorumFleetScenario.run(url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix, "Redis");
        } finally {
            try (JedisPooled raw = RedisTestSupport.raw()) {
                RedisTestSupport.deleteAll(raw, prefix);
            }
        }
    }
}
