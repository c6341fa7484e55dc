package dev.redeye.store.redis;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import redis.clients.jedis.JedisPooled;

/**
 * A test class whose every test has a key prefix of its own on the test Redis and a raw client to it: both made
 * before the subclass's own {@code @BeforeEach} methods run, and after its {@code @AfterEach} methods every key
 * under the prefix is deleted and the client closed.
 */
abstract class WithRedisPrefix {
    /** A client of the test Redis for reading and planting keys directly. */
    JedisPooled raw;
    /** This test's key prefix. */
    String prefix;

    @BeforeEach
    final void openRawClientAndPrefix() {
        raw = RedisTestSupport.raw();
        prefix = RedisTestSupport.newPrefix();
    }

    @AfterEach
    final void deletePrefixAndCloseRawClient() {
        if (raw != null) {
            RedisTestSupport.deleteAll(raw, prefix);
            raw.close();
        }
    }
}
