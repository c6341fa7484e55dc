package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.testsupport.RedisProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.StreamEntryID;

/**
 * The feed under faults, on a private redis-server: an event this instance could not publish reaches its own
 * subscribers as {@code onGap} at once and other instances' readers as a gap marker; a subscriber that sets
 * its thread's interrupt flag cannot make the reader skip its reconnect backoff.
 */
class RedisFeedGapTest {
    private RedisProcess server;
    private final List<RedisStore> stores = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() {
        server = RedisProcess.start();
    }

    @AfterEach
    void stop() {
        stores.forEach(RedisStore::close);
        server.close();
    }

    private RedisStore open(String userInfo, String prefix) {
        RedisStore s = RedisStore.open("redis://" + userInfo + "127.0.0.1:" + server.port() + "?prefix=" + prefix);
        stores.add(s);
        return s;
    }

    private static void await(BooleanSupplier cond, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(10);
        }
    }

    private void acl(String... args) {
        try (Jedis admin = new Jedis("127.0.0.1", server.port())) {
            admin.aclSetUser("writer", args);
        }
    }

    @Test
    void anEventThatCouldNotBePublishedIsAGapHereAndAMarkerForEveryOtherReader() throws Exception {
        // the writer may run every command but XADD: the state function works, publish is refused
        acl("reset", "on", ">pw", "~*", "&*", "+@all", "-xadd");
        String prefix = RedisTestSupport.newPrefix();
        RedisStore a = open("writer:pw@", prefix);
        RedisStore b = open("", prefix);
        AtomicInteger gapsA = new AtomicInteger();
        AtomicInteger gapsB = new AtomicInteger();
        List<TransitionEvent> eventsB = new CopyOnWriteArrayList<>();
        a.subscribe(e -> { }, gapsA::incrementAndGet);
        b.subscribe(eventsB::add, gapsB::incrementAndGet);
        Policy p = Policy.builder().failureThreshold(1).build();

        StateChange opened = a.apply("lost", AtomicOperation.failure(), p, 1);
        assertEquals(TransitionKind.OPENED, opened.transition(), "the state change itself is committed and returned");
        assertEquals(1, gapsA.get(), "this instance's subscribers learn at once that they missed an event");
        assertTrue(a.get("lost").orElseThrow().open());

        acl("+xadd"); // the stream accepts writes again
        assertTrue(a.get("any").isEmpty()); // the next successful command appends the gap marker
        await(() -> gapsB.get() == 1, "another instance's reader signals a gap when it reads the marker");
        assertTrue(eventsB.isEmpty(), "the lost event itself cannot be delivered: " + eventsB);

        a.apply("later", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 2);
        await(() -> eventsB.size() == 1, "events flow again");
        assertEquals(1, gapsA.get(), "the instance that wrote the marker does not signal its own gap twice");
        assertEquals(1, gapsB.get());
    }

    /**
     * A fail-over to a primary whose clock is behind, or that lost the stream, moves the stream's end below the
     * position a reader remembers; entries appended afterwards have lower ids, and a reader resuming after its
     * remembered id would skip them all without a word. Here the old primary's clock is an hour ahead (the
     * entry the reader last read has an id one hour in the future), then the stream is deleted and re-created
     * with a lower id, as the new primary has it.
     */
    @Test
    void aStreamWhoseEndMovedBelowTheReadersPositionIsAGapAndLaterEventsAreDelivered() throws Exception {
        String prefix = RedisTestSupport.newPrefix();
        try (JedisPooled jedis = new JedisPooled("127.0.0.1", server.port());
                Jedis admin = new Jedis("127.0.0.1", server.port())) {
            RedisStore store = RedisStore.builder(jedis).prefix(prefix).feedBlock(Duration.ofMillis(200)).build();
            stores.add(store);
            long aheadMs = System.currentTimeMillis() + TimeUnit.HOURS.toMillis(1);
            admin.xadd(store.feedKey(), new StreamEntryID(aheadMs, 0), Map.of("note", "written by a clock one hour ahead"));
            AtomicInteger gaps = new AtomicInteger();
            List<TransitionEvent> events = new CopyOnWriteArrayList<>();
            store.subscribe(events::add, gaps::incrementAndGet);
            Policy p = Policy.defaults();
            store.apply("before", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 1); // appended at aheadMs-1: read
            await(() -> events.size() == 1, "the event before the fail-over");

            admin.del(store.feedKey()); // the new primary's stream: re-created, its end below the reader's position
            admin.xadd(store.feedKey(), new StreamEntryID(1, 1), Map.of("note", "the new primary's stream"));
            // appended at the server's now, below aheadMs: skipped by a reader that resumes after its position;
            // delivered or not, it happened before the gap, which makes subscribers re-read the state
            store.apply("after", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 2);
            await(() -> gaps.get() >= 1, "a gap once the reader sees the stream end below its position");
            store.apply("later", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 3);
            await(() -> events.stream().anyMatch(e -> e.operation().equals("later")),
                    "the events appended after the gap");
            Thread.sleep(600); // three more idle reads with their checks: the gap is not signalled again
            assertEquals(1, gaps.get(), "one gap for one rewind");
        }
    }

    @Test
    void aSubscriberThatInterruptsTheReaderThreadCannotMakeItSpin() throws Exception {
        String prefix = RedisTestSupport.newPrefix();
        RedisStore store = open("", prefix);
        AtomicInteger gaps = new AtomicInteger();
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        store.subscribe(e -> {
            events.add(e);
            Thread.currentThread().interrupt(); // a subscriber's own business, left behind on the reader thread
        }, () -> {
            gaps.incrementAndGet();
            Thread.currentThread().interrupt();
        });
        Policy p = Policy.defaults();
        store.apply("i", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 1);
        await(() -> events.size() == 1, "the first event");

        server.kill(); // reconnects now fail at once (connection refused): only the backoff paces them
        Thread.sleep(2_000);
        int inTwoSeconds = gaps.get();
        // backoff 100, 200, 400, 800 ms...: about 5 failed attempts in 2 s; a spinning reader makes thousands
        assertTrue(inTwoSeconds >= 1 && inTwoSeconds <= 15, "gaps in 2 s with the server down: " + inTwoSeconds);

        server.restart();
        try (RedisStore writer = RedisStore.open(server.url() + "?prefix=" + prefix)) {
            writer.apply("i", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 2);
            await(() -> events.size() == 2, "the reader reconnects and delivers again");
        }
        assertTrue(store.isFeedReaderAlive());
        assertFalse(Thread.currentThread().isInterrupted());
    }
}
