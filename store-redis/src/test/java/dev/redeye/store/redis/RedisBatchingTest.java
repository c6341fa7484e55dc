package dev.redeye.store.redis;

import dev.redeye.testsupport.BatchingScenario;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Write batching over Redis ({@link BatchingScenario}): a batch is one call of the library's outcomes function,
 * over two stores opened lazily from the URI (the first declares {@code OutcomeBatches} before it connects).
 */
class RedisBatchingTest {
    private final String prefix = RedisTestSupport.newPrefix();

    @AfterEach
    void deleteKeys() {
        try (var raw = RedisTestSupport.raw()) {
            RedisTestSupport.deleteAll(raw, prefix);
        }
    }

    @Test
    void twoBatchingInstancesCountEveryOutcomeInFewWritesAndOpenAtOnce() {
        String url = RedisTestSupport.url();
        BatchingScenario.run(url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix);
    }
}
