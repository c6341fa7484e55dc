package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.testsupport.RedisProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckRunner;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;

/**
 * The ACL the README's "Running it in production" documents is enough: a user allowed only those commands,
 * only on keys under its prefix, passes the whole TCK on a private server (the feed included), and runs every
 * function of the library on the private Cluster.
 */
class RedisAclTest {
    /** The README's rules, after {@code ACL SETUSER <user> on >password}; the key pattern comes last. */
    static final List<String> RULES = List.of("resetkeys", "resetchannels", "-@all",
            "+ping", "+info", "+hgetall", "+del", "+fcall", "+function|load", "+evalsha", "+script|load", "+wait",
            "+hmget", "+pexpire", "+persist", "+exists", "+time", "+type", "+get", "+set", "+zscore",
            "+zcount", "+zremrangebyscore", "+zcard", "+zadd", "+pttl", "+zrem", "+xadd",
            "+xread", "+xrange", "+xrevrange", "+client|setname", "+cluster|slots", "+scan", "+mget");

    private static String[] rules(String prefix) {
        List<String> r = new ArrayList<>(List.of("reset", "on", ">pw"));
        r.addAll(RULES);
        r.add("~" + prefix + "*");
        return r.toArray(new String[0]);
    }

    @Test
    void theDocumentedAclPassesTheTck() {
        try (RedisProcess server = RedisProcess.start(); Jedis admin = new Jedis("127.0.0.1", server.port())) {
            String prefix = "acl:";
            admin.aclSetUser("redeye", rules(prefix));
            TckReport report = TckRunner.run("redis://redeye:pw@127.0.0.1:" + server.port() + "?prefix=" + prefix);
            assertTrue(report.successful(), report.format());
            assertTrue(report.passed() > 50, report.format());
        }
    }

    @Test
    void theDocumentedAclRunsEveryFunctionOnACluster() throws Exception {
        String prefix = RedisTestSupport.newPrefix();
        RedisStoreProvider.Parsed p = RedisStoreProvider.parse(RedisTestCluster.url());
        try (JedisCluster raw = new JedisCluster(Set.of(p.address()), p.config())) {
            for (Map.Entry<String, ConnectionPool> node : raw.getClusterNodes().entrySet()) {
                try (Jedis j = new Jedis(node.getValue().getResource())) {
                    j.aclSetUser("redeye", rules(prefix));
                }
            }
        }
        String url = RedisTestCluster.url().replace("redis://", "redis://redeye:pw@");
        try (RedisStore store = RedisStore.open(url + "?prefix=" + prefix)) {
            List<TransitionEvent> events = new CopyOnWriteArrayList<>();
            store.subscribe(events::add, () -> { });
            Policy policy = Policy.builder().failureThreshold(2).build();
            for (int i = 0; i < 10; i++) {
                String op = "op-" + i;
                store.apply(op, AtomicOperation.outcomes(new long[] {AtomicOperation.packOutcome(false, false, 1)}, 1,
                        null), policy, 1); // a batch of one failure
                store.apply(op, AtomicOperation.failure(), policy, 2); // opens: published by a second call on a Cluster
                String token = store.claimTrial(op, 1, Duration.ofSeconds(5)).orElseThrow();
                store.releaseTrial(op, token);
                store.apply(op, AtomicOperation.force(BreakerStatus.CLOSED), policy, 3);
                store.put(op + "-put", dev.redeye.api.BreakerState.INITIAL, Duration.ofMinutes(1));
                store.delete(op + "-put");
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (events.size() < 20 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(20, events.size(), "an opening and a forced close each, read by the feed");
        }
    }
}
