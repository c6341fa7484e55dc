package dev.redeye.store.redis;

/**
 * The full cluster TCK again under a prefix carrying a hash tag of its own ({@code ...{run}:}, as teams write
 * to keep an application's keys on one node): Redis Cluster then hashes the prefix's tag, not the operation's,
 * so every key of the store, the feed stream included, is in one slot, and every script still touches one slot
 * only. {@link RedisKeySlotsTest} covers the other brace placements slot by slot, and the refused one.
 */
class RedisClusterBracedPrefixTckTest extends RedisClusterTckTest {
    private static final String PREFIX = "redeye-test:{" + RedisTestSupport.newPrefix().substring("redeye-test:".length())
            .replace(":", "") + "}:";

    @Override
    protected String prefix() {
        return PREFIX;
    }
}
