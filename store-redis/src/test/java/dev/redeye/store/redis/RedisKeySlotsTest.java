package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * Every key a script of one operation touches is in one Redis Cluster hash slot, whatever the prefix and the
 * name, computed with Jedis' own {@link JedisClusterCRC16} (the hash-tag rules the cluster applies): a prefix
 * that would break it ({@code app{}:}, whose empty tag makes Redis hash each whole key) is refused with the
 * reason, and the refusal is shown to be needed by the slots of the keys it would have made and by the
 * cluster's own CROSSSLOT answer.
 */
class RedisKeySlotsTest {
    private static final List<String> HOSTILE_PREFIXES = List.of("", "myapp:", "app{}:", "{}", "{}app:", "app{",
            "app{:", "app}", "app}{", "app}{}:", "app{x}:", "{x}", "{x}{}", "app{x", "a{b}{}", "{", "}", "}{", "{{",
            "{{}}", "{}{}", "%7B%7D", "app:%", "app\u0000{", "\uD83D\uDE00{", "{\uD83D\uDE00}", "x".repeat(5_000) + "{}");
    private static final List<String> HOSTILE_NAMES = List.of("a", "", "%", "{", "}", "{}", "}{", "{a}", "a}", "{a",
            "a:trial", "a:state", "%7B", "{}".repeat(300), "new\nline", "\u0000", "\uD83D\uDE00");

    /** The three keys a script of one operation touches, as {@link RedisKeys} makes them. */
    private static List<String> scriptKeys(RedisKeys keys, String name) {
        return List.of(keys.state(name), keys.claims(name), keys.claim1(name));
    }

    /** The same keys built from the documented layout without the prefix check, for refused prefixes. */
    private static List<String> unchecked(String prefix, String name) {
        String tagged = prefix + "{" + RedisKeys.tag(name) + "}";
        return List.of(tagged + RedisKeys.STATE_SUFFIX, tagged + RedisKeys.CLAIMS_SUFFIX, tagged + RedisKeys.CLAIM1_SUFFIX);
    }

    private static Set<Integer> slots(List<String> keys) {
        Set<Integer> s = new java.util.HashSet<>();
        for (String k : keys) {
            s.add(JedisClusterCRC16.getSlot(k));
        }
        return s;
    }

    /** Random prefixes and names, mostly braces and the characters around them. */
    private static String random(Random r, int max) {
        String alphabet = "{{{}}}:a%\u0000";
        StringBuilder sb = new StringBuilder();
        int n = r.nextInt(max + 1);
        for (int i = 0; i < n; i++) {
            sb.append(alphabet.charAt(r.nextInt(alphabet.length())));
        }
        return sb.toString();
    }

    @Test
    void everyKeyOfAnOperationIsInOneSlotForEveryPrefixTheStoreAccepts() {
        List<String> prefixes = new ArrayList<>(HOSTILE_PREFIXES);
        List<String> names = new ArrayList<>(HOSTILE_NAMES);
        Random r = new Random(22);
        for (int i = 0; i < 2_000; i++) {
            prefixes.add(random(r, 8));
        }
        for (int i = 0; i < 200; i++) {
            names.add(random(r, 6));
        }
        int accepted = 0;
        int refused = 0;
        for (String prefix : prefixes) {
            RedisKeys keys;
            try {
                keys = new RedisKeys(prefix);
            } catch (IllegalArgumentException e) {
                refused++;
                assertTrue(e.getMessage().contains("CROSSSLOT"), e.getMessage());
                // the refusal is needed: under this prefix the keys of an operation would be in several slots
                boolean split = false;
                for (String name : names) {
                    split |= slots(unchecked(prefix, name)).size() > 1;
                }
                assertTrue(split, "prefix '" + prefix + "' is refused although every operation's keys share a slot");
                continue;
            }
            accepted++;
            for (String name : names) {
                List<String> k = scriptKeys(keys, name);
                assertEquals(1, slots(k).size(), "prefix '" + prefix + "', name '" + name + "': " + k + " in slots "
                        + slots(k));
            }
        }
        assertTrue(accepted > 100 && refused > 100, "accepted " + accepted + ", refused " + refused);
    }

    @Test
    void aPrefixWithAnEmptyTagFirstIsRefusedByTheBuilderAndTheUriNamingWhy() {
        try (JedisPooled jedis = new JedisPooled("127.0.0.1", 1)) { // never connected: build() sends nothing
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> RedisStore.builder(jedis).prefix("app{}:"));
            assertTrue(e.getMessage().contains("app{}:") && e.getMessage().contains("CROSSSLOT"), e.getMessage());
            assertEquals("app{x}:", RedisStore.builder(jedis).prefix("app{x}:").build().prefix());
            IllegalArgumentException unpaired = assertThrows(IllegalArgumentException.class,
                    () -> RedisStore.builder(jedis).prefix("app\uD800:"));
            assertTrue(unpaired.getMessage().contains("prefix") && unpaired.getMessage().contains("index 3"),
                    unpaired.getMessage());
        }
        IllegalArgumentException uri = assertThrows(IllegalArgumentException.class,
                () -> RedisStoreProvider.parse("redis://127.0.0.1:1?prefix=app%7B%7D:"));
        assertTrue(uri.getMessage().startsWith("Redis URI parameter prefix") && uri.getMessage().contains("CROSSSLOT"),
                uri.getMessage());
    }

    /**
     * On the private three-master cluster: the keys a refused prefix would make are refused by the server
     * itself (CROSSSLOT), and under hostile accepted prefixes every script of the store runs.
     */
    @Test
    void onARealClusterTheRefusedPrefixFailsWithCrossslotAndAcceptedOnesWork() {
        RedisStoreProvider.Parsed p = RedisStoreProvider.parse(RedisTestCluster.url());
        try (JedisCluster raw = new JedisCluster(Set.of(p.address()), p.config())) {
            String run = RedisTestSupport.newPrefix();
            List<String> broken = unchecked(run + "app{}:", "payment-gateway");
            assertNotEquals(1, slots(broken).size());
            // straight to the node owning the first key (the cluster client would refuse before sending)
            try (Jedis node = new Jedis(raw.getConnectionFromSlot(JedisClusterCRC16.getSlot(broken.get(0))))) {
                JedisDataException e = assertThrows(JedisDataException.class,
                        () -> node.eval("return redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3])", broken, List.of()));
                assertTrue(e.getMessage().contains("CROSSSLOT"), e.getMessage());
            }

            Policy policy = Policy.builder().failureThreshold(2).build();
            for (String prefix : List.of("app{x}:", "app{", "app{:", "app}{", "{x}{}", "a{b}{}", "}", "{{")) {
                try (RedisStore store = RedisStore.builder(raw).prefix(run + prefix).build()) {
                    for (String name : List.of("a", "{}", "}{", "")) {
                        store.apply(name, AtomicOperation.failure(), policy, 1);
                        store.apply(name, AtomicOperation.failure(), policy, 2);
                        String token = store.claimTrial(name, 1, java.time.Duration.ofSeconds(5)).orElseThrow();
                        store.releaseTrial(name, token);
                        store.put(name, BreakerState.INITIAL, java.time.Duration.ofMinutes(1));
                        store.delete(name);
                    }
                } catch (RuntimeException ex) {
                    fail("prefix '" + run + prefix + "' on the cluster: " + ex, ex);
                }
            }
        }
    }
}
