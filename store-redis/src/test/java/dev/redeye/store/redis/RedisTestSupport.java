package dev.redeye.store.redis;

import dev.redeye.api.BreakerState;
import dev.redeye.spi.support.StateCodec;
import dev.redeye.testsupport.ServiceAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.params.SetParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * Where the tests find Redis ({@link #REDIS}: {@code REDEYE_REDIS_URL}, else a Testcontainers Redis, else a
 * failure saying how to provide one) and the raw access they check it with.
 */
final class RedisTestSupport {
    static final ServiceAddress REDIS = ServiceAddress.of("REDEYE_REDIS_URL", "redis:7.2-alpine", 6379,
            "redis://%s:%d", "for example export REDEYE_REDIS_URL=redis://127.0.0.1:6379 after"
                    + " 'apt-get install -y redis-server' or 'redis-server --daemonize yes'.");

    private RedisTestSupport() {
    }

    static String url() {
        return REDIS.url();
    }

    /** A fresh key prefix, so concurrent test runs on one server never meet. */
    static String newPrefix() {
        return "redeye-test:" + UUID.randomUUID().toString().substring(0, 12) + ":";
    }

    /** A raw client for assertions and for writing data redeye did not write. */
    static JedisPooled raw() {
        RedisStoreProvider.Parsed p = RedisStoreProvider.parse(url());
        return new JedisPooled(p.address(), p.config());
    }

    /** Deletes every key under {@code prefix} (only keys this test created). */
    static void deleteAll(JedisPooled raw, String prefix) {
        String cursor = ScanParams.SCAN_POINTER_START;
        ScanParams params = new ScanParams().match(prefix + "*").count(500);
        do {
            ScanResult<String> r = raw.scan(cursor, params);
            for (String k : r.getResult()) {
                raw.del(k);
            }
            cursor = r.getCursor();
        } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
    }

    /** The CLIENT LIST ids of the connections named {@code clientName}. */
    static List<String> clientIds(JedisPooled raw, String clientName) {
        Object reply = raw.sendCommand(Protocol.Command.CLIENT, "LIST");
        String list = reply instanceof byte[] ? new String((byte[]) reply, StandardCharsets.UTF_8) : String.valueOf(reply);
        List<String> ids = new ArrayList<>();
        for (String line : list.split("\n")) {
            if ((line.trim() + " ").contains(" name=" + clientName + " ")) {
                for (String part : line.trim().split(" ")) {
                    if (part.startsWith("id=")) {
                        ids.add(part.substring(3));
                    }
                }
            }
        }
        return ids;
    }

    /** Kills the connections named {@code clientName} (CLIENT KILL has no NAME filter: look the ids up). */
    static boolean killClient(JedisPooled raw, String clientName) {
        List<String> ids = clientIds(raw, clientName);
        for (String id : ids) {
            raw.sendCommand(Protocol.Command.CLIENT, "KILL", "ID", id);
        }
        return !ids.isEmpty();
    }

    /**
     * The TCK's rewind hook (R6.12): replaces the state value with {@code state}'s, as a fail-over to a replica
     * that missed the latest write leaves it. The feed stream is left alone.
     */
    static void rewind(UnifiedJedis raw, String stateKey, BreakerState state) {
        raw.set(stateKey, RedisStore.value(state), SetParams.setParams().px(3_600_000L));
    }

    /** The names of the fields of a state value, in their order in it. */
    static final List<String> FIELDS = List.of(StateCodec.FAILURES, StateCodec.LAST_FAILURE_AT, StateCodec.OPEN,
            StateCodec.OPENED_AT, StateCodec.OPEN_COUNT, StateCodec.ERROR_RATE, StateCodec.SAMPLES,
            StateCodec.TRIAL_SUCCESSES, StateCodec.FORCED, StateCodec.VERSION);

    /**
     * The field {@code name} (StateCodec's) of a stored state value (the ten fields joined by ','), or null
     * for no value.
     */
    static String field(String value, String name) {
        if (value == null) {
            return null;
        }
        String[] f = value.split(",", -1);
        if (f.length != FIELDS.size()) {
            throw new IllegalArgumentException("not a state value: " + value);
        }
        return f[FIELDS.indexOf(name)];
    }

    /** {@code value} with its field {@code name} replaced by {@code replacement}. */
    static String withField(String value, String name, String replacement) {
        String[] f = value.split(",", -1);
        f[FIELDS.indexOf(name)] = replacement;
        return String.join(",", f);
    }
}
