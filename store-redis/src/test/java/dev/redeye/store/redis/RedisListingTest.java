package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.spi.OperationListing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

/**
 * The Redis listing beyond the TCK's R15: the key mapping's inverse, the prefix escaped in SCAN's pattern, pages
 * bounded although one SCAN returns more keys than the limit, and cursors it did not make refused.
 */
class RedisListingTest {
    private static final BreakerState STATE = BreakerState.INITIAL.toBuilder().failures(2).build();

    @Test
    void everyStateKeyDecodesToItsOperationAndNoOtherKeyDoes() {
        RedisKeys keys = new RedisKeys("app{:");
        for (String name : List.of("", "%", "%25", "{", "}", "a{b}c", "%7B", "a%", "plain", "x:state", "\u4e2d")) {
            assertEquals(name, keys.operationOf(keys.state(name)), "the operation of " + keys.state(name));
            assertNull(keys.operationOf(keys.claims(name)), "a claims key");
            assertNull(keys.operationOf(keys.claim1(name)), "a one-permit claim key");
            assertNull(new RedisKeys("app{:x").operationOf(keys.state(name)), "another prefix's key");
        }
        assertNull(keys.operationOf(keys.feed()), "the feed stream");
        assertNull(keys.operationOf("app{:{a%zz}:state"), "a tag no name has");
        assertNull(keys.operationOf("app{:{a{b}:state"), "a brace in the tag");
        assertNull(keys.operationOf("app{:{}:state"), "an empty tag (the empty name's is %)");
        assertEquals("app{\\*\\?\\[x\\]\\\\:{*}:state", new RedisKeys("app{*?[x]\\:").statePattern());
    }

    /** A prefix holding glob characters lists its own keys: SCAN's pattern escapes them. */
    @Test
    void aPrefixWithGlobCharactersListsItsOwnKeys() {
        String prefix = RedisTestSupport.newPrefix() + "[ab]*?\\:";
        try (JedisPooled raw = RedisTestSupport.raw();
                RedisStore store = RedisStore.builder(raw).prefix(prefix).build();
                RedisStore other = RedisStore.builder(raw).prefix(prefix.replace("[ab]", "a")).build()) {
            store.put("mine", STATE, Duration.ofMinutes(1));
            other.put("theirs", STATE, Duration.ofMinutes(1));
            assertEquals(Set.of("mine"), all(store, 7));
            RedisTestSupport.deleteAll(raw, prefix.substring(0, prefix.indexOf('[')));
        }
    }

    /**
     * SCAN returns as many keys as its COUNT reaches, above a small limit: the page holds the limit and the cursor
     * carries the rest, which the next pages return without another SCAN.
     */
    @Test
    void aScanBeyondTheLimitIsCarriedInTheCursorAndPagesStayBounded() {
        String prefix = RedisTestSupport.newPrefix();
        try (JedisPooled raw = RedisTestSupport.raw();
                RedisStore store = RedisStore.builder(raw).prefix(prefix).build()) {
            Set<String> written = new TreeSet<>();
            for (int i = 0; i < 40; i++) {
                store.put("op-" + i, STATE, Duration.ofMinutes(1));
                written.add("op-" + i);
            }
            store.put("", STATE, Duration.ofMinutes(1));
            written.add("");
            String cursor = null;
            List<OperationListing.Entry> listed = new ArrayList<>();
            int pages = 0;
            do {
                OperationListing.Page page = store.page(cursor, 1);
                assertTrue(page.entries().size() <= 1, "a page of limit 1 held " + page.entries().size());
                listed.addAll(page.entries());
                cursor = page.next();
                pages++;
            } while (cursor != null);
            Set<String> names = new TreeSet<>();
            for (OperationListing.Entry e : listed) {
                names.add(e.operation());
                assertEquals(STATE.failures(), e.stateIfRead().orElseThrow().failures(), "the state of " + e);
            }
            assertEquals(written, names);
            assertTrue(pages >= 41, "pages: " + pages);
            RedisTestSupport.deleteAll(raw, prefix);
        }
    }

    @Test
    void aCursorItDidNotMakeIsRefused() {
        try (JedisPooled raw = RedisTestSupport.raw();
                RedisStore store = RedisStore.builder(raw).prefix(RedisTestSupport.newPrefix()).build()) {
            for (String bad : List.of("", "0", "r1~s~0~0", "r1~s~x~0~", "r1~s~0~2~", "r1~99999~0~0~", "r1~s~0~0~zz",
                    "r1~s~0~1~", "r2~s~0~0~", "r1~7~0~0~")) {
                assertThrows(IllegalArgumentException.class, () -> store.page(bad, 10), "cursor '" + bad + "'");
            }
            assertThrows(IllegalArgumentException.class, () -> store.page(null, 0));
        }
    }

    private static Set<String> all(RedisStore store, int limit) {
        Set<String> out = new TreeSet<>();
        String cursor = null;
        do {
            OperationListing.Page page = store.page(cursor, limit);
            page.entries().forEach(e -> out.add(e.operation()));
            cursor = page.next();
        } while (cursor != null);
        return out;
    }
}
