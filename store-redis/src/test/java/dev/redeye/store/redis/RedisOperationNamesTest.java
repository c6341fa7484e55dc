package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.redeye.CircuitBreaker;
import dev.redeye.StoreErrorPolicy;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.OperationNames;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

/**
 * Names belong to the engine, over a store that refuses ill-formed names itself: an unpaired surrogate is the
 * caller's error (thrown at once), never a store error that ALLOW answers by letting every call through; and
 * the longest names the engine accepts work on Redis.
 */
class RedisOperationNamesTest {

    @Test
    void aLoneSurrogateUnderAllowIsTheCallersErrorNotAStoreError() {
        String prefix = RedisTestSupport.newPrefix();
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger storeErrors = new AtomicInteger();
        try (JedisPooled raw = RedisTestSupport.raw();
                CircuitBreaker b = CircuitBreaker.builder()
                        .store(RedisStore.open(RedisTestSupport.url() + "?prefix=" + prefix))
                        .storeErrorPolicy(StoreErrorPolicy.ALLOW).failureThreshold(3)
                        .onStoreError((op, ex) -> storeErrors.incrementAndGet()).build()) {
            String name = "payment\uD800";
            for (int i = 0; i < 10; i++) {
                assertThrows(IllegalArgumentException.class, () -> b.execute(name, () -> {
                    ran.incrementAndGet();
                    throw new IllegalStateException("dependency down");
                }));
            }
            assertEquals(0, ran.get(), "calls of an invalid name that ran");
            assertEquals(0, storeErrors.get(), "store errors reported");
            RedisTestSupport.deleteAll(raw, prefix);
        }
    }

    @Test
    void theLongestValidNamesWorkOnRedis() {
        String prefix = RedisTestSupport.newPrefix();
        try (JedisPooled raw = RedisTestSupport.raw();
                CircuitBreaker b = CircuitBreaker.builder()
                        .store(RedisStore.open(RedisTestSupport.url() + "?prefix=" + prefix))
                        .storeErrorPolicy(StoreErrorPolicy.REJECT).failureThreshold(1).build()) {
            for (String name : new String[] {"\u4e2d".repeat(OperationNames.MAX_LENGTH),
                "\uD83D\uDE00{}".repeat(OperationNames.MAX_LENGTH / 4), "%{".repeat(OperationNames.MAX_LENGTH / 2)}) {
                assertEquals(BreakerStatus.CLOSED, b.status(name));
                b.recordFailure(name);
                assertEquals(BreakerStatus.OPEN, b.status(name));
            }
            RedisTestSupport.deleteAll(raw, prefix);
        }
    }
}
