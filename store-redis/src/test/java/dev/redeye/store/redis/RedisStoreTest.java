package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.support.StateCodec;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.StreamEntryID;
import redis.clients.jedis.resps.StreamEntry;
import redis.clients.jedis.util.JedisClusterCRC16;

/** Redis-specific behaviour on a real redis-server: scripts, keys, feed connection, layout. */
class RedisStoreTest extends WithRedisPrefix {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final List<RedisStore> stores = new ArrayList<>();

    @AfterEach
    void tearDown() {
        stores.forEach(RedisStore::close);
    }

    private RedisStore newStore() {
        RedisStore s = RedisStore.builder(RedisTestSupport.raw())
                .prefix(prefix)
                .closeClient(true)
                .feedBlock(Duration.ofMillis(500))
                .feedBackoff(Duration.ofMillis(10), Duration.ofMillis(200))
                .build();
        stores.add(s);
        return s;
    }

    private static void await(BooleanSupplier cond, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + WAIT + " waiting for " + what);
            }
            Thread.sleep(10);
        }
    }

    // ------------------------------------------------------------ keys and layout

    @Test
    void layoutVisibleToRedisCliMatchesTheJavadoc() {
        RedisStore store = newStore();
        Policy p = Policy.builder().failureThreshold(2).build();
        long before = serverMicros();
        store.apply("payment-gateway", AtomicOperation.failure(), p, 1_000);
        long after = serverMicros();

        String stateKey = prefix + "{payment-gateway}:state";
        assertEquals(stateKey, store.stateKey("payment-gateway"));
        assertEquals("string", raw.type(stateKey));
        String value = raw.get(stateKey);
        // failures, lastFailureAt, open, openedAt, openCount, errorRate, samples, trialSuccesses, forced, version
        assertTrue(value.matches("1,1000,0,0,0,0,0,0,0,\\d+"), value);
        long base = Long.parseLong(RedisTestSupport.field(value, "version"));
        assertTrue(base >= before && base <= after, "a new key's version base is the server clock in microseconds "
                + "(TIME), between " + before + " and " + after + ": " + base);
        long ttl = raw.pttl(stateKey);
        assertTrue(ttl > 0 && ttl <= p.stateTtlMillis(), "state TTL " + ttl);

        StateChange opened = store.apply("payment-gateway", AtomicOperation.failure(), p, 2_000);
        assertEquals(TransitionKind.OPENED, opened.transition());
        assertEquals("2,2000,1,2000,0,0,0,0,0," + (base + 1), raw.get(stateKey));

        String claim1Key = prefix + "{payment-gateway}:trial1";
        assertEquals(claim1Key, store.claim1Key("payment-gateway"));
        String token = store.claimTrial("payment-gateway", 1, Duration.ofSeconds(30)).orElseThrow();
        assertEquals("string", raw.type(claim1Key), "one permit: SET NX PX");
        assertEquals(token, raw.get(claim1Key));
        long claim1Ttl = raw.pttl(claim1Key);
        assertTrue(claim1Ttl > 0 && claim1Ttl <= 30_000, "one-permit claim TTL " + claim1Ttl);

        String claimsKey = prefix + "{payment-gateway}:trial";
        assertEquals(claimsKey, store.claimsKey("payment-gateway"));
        String token2 = store.claimTrial("payment-gateway", 2, Duration.ofSeconds(30)).orElseThrow();
        assertEquals("zset", raw.type(claimsKey), "several permits: a sorted set");
        assertEquals(List.of(token2), raw.zrange(claimsKey, 0, -1));
        long claimTtl = raw.pttl(claimsKey);
        assertTrue(claimTtl > 0 && claimTtl <= 30_000, "claims TTL " + claimTtl);

        String feedKey = prefix + "redeye:feed";
        assertEquals(feedKey, store.feedKey());
        assertEquals("stream", raw.type(feedKey));
        List<StreamEntry> entries = raw.xrange(feedKey, "-", "+");
        assertEquals(1, entries.size(), "one entry per transition, none for the sub-threshold increment");
        Map<String, String> ev = entries.get(0).getFields();
        assertEquals("payment-gateway", ev.get("op"));
        assertEquals("opened", ev.get("kind"));
        assertEquals(Integer.toString(BreakerStatus.CLOSED.code()), ev.get("from"));
        assertEquals(Long.toString(base + 1), ev.get("version"));
        assertTrue(raw.pttl(feedKey) > 0, "the feed stream carries a clean-up TTL");

        assertEquals(prefix + "{a%7Bb%7D%25}:state", store.stateKey("a{b}%"));
        assertEquals(prefix + "{%}:state", store.stateKey(""));

        store.delete("payment-gateway");
        assertFalse(raw.exists(stateKey));
        assertFalse(raw.exists(claimsKey));
        assertFalse(raw.exists(claim1Key));
    }

    @Test
    void hostileNamesRoundTripStayDistinctAndShareOneSlotPerOperation() throws Exception {
        RedisStore store = newStore();
        RedisStore other = newStore();
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        other.subscribe(events::add, () -> { });
        List<String> names = List.of("a", "a:trial", "a:state", "a}", "{a", "{a}", "}{", "%7B", "{", "}", "%", "",
                "with space", "new\nline", "quote'\"", "'; DROP TABLE x; --", "\uD83D\uDE00 emoji \uD834\uDD1E",
                "x".repeat(10_240), "{}".repeat(2_000));
        Policy p = Policy.builder().failureThreshold(1).build();
        for (int i = 0; i < names.size(); i++) {
            String n = names.get(i);
            store.put(n, BreakerState.INITIAL.toBuilder().failures(i + 1).build(), Duration.ofMinutes(1));
            assertEquals(JedisClusterCRC16.getSlot(store.stateKey(n)), JedisClusterCRC16.getSlot(store.claimsKey(n)),
                    "state and claims of one operation share a slot");
            assertEquals(JedisClusterCRC16.getSlot(store.stateKey(n)), JedisClusterCRC16.getSlot(store.claim1Key(n)),
                    "state and the one-permit claim of one operation share a slot");
        }
        for (int i = 0; i < names.size(); i++) {
            assertEquals(i + 1, other.get(names.get(i)).orElseThrow().failures(), "name #" + i);
        }
        for (String n : names) {
            store.delete(n);
            assertEquals(TransitionKind.OPENED, store.apply(n, AtomicOperation.failure(), p, 5).transition());
        }
        await(() -> events.size() >= names.size(), "an event per hostile name");
        List<String> seen = new ArrayList<>();
        events.forEach(e -> seen.add(e.operation()));
        assertEquals(names, seen);
    }

    // ------------------------------------------------------------ malformed data

    @Test
    void malformedDataIsAStoreExceptionAndIsLeftAlone() {
        RedisStore store = newStore();
        Policy p = Policy.defaults();
        raw.set(store.stateKey("str"), "not a state");
        assertThrows(StoreException.class, () -> store.get("str"));
        assertThrows(StoreException.class, () -> store.apply("str", AtomicOperation.failure(), p, 1));
        assertEquals("not a state", raw.get(store.stateKey("str")));
        String good = RedisStore.value(BreakerState.INITIAL);
        for (String v : List.of("", good + ",", good + ",1", good.substring(good.indexOf(',') + 1),
                RedisTestSupport.withField(good, "failures", "twelve"),
                RedisTestSupport.withField(good, "errorRate", "1.5"),
                RedisTestSupport.withField(good, "open", "perhaps"),
                RedisTestSupport.withField(good, "version", ""),
                RedisTestSupport.withField(good, "failures", "99999999999"))) {
            raw.set(store.stateKey("badvalue"), v);
            assertThrows(StoreException.class, () -> store.get("badvalue"), v);
            StoreException bad = assertThrows(StoreException.class, () -> store.apply("badvalue", AtomicOperation.failure(), p, 1), v);
            assertTrue(bad.getMessage().contains("malformed"), bad.getMessage());
            assertThrows(StoreException.class, () -> store.apply("badvalue", AtomicOperation.trialFailed(0), p, 1), v);
            assertEquals(v, raw.get(store.stateKey("badvalue")), "left alone");
        }
        // a value in another form every reader parses alike is a state
        raw.set(store.stateKey("lenient"), RedisTestSupport.withField(RedisTestSupport.withField(good, "open", "false"),
                "failures", "+2"));
        assertEquals(2, store.get("lenient").orElseThrow().failures());
        assertEquals(3, store.apply("lenient", AtomicOperation.failure(), p, 1).state().failures());

        // the hash of an earlier release, malformed

        raw.hset(store.stateKey("garbage"), Map.of("foo", "bar"));
        assertThrows(StoreException.class, () -> store.get("garbage"));
        StoreException e = assertThrows(StoreException.class, () -> store.apply("garbage", AtomicOperation.success(), p, 1));
        assertTrue(e.getMessage().contains("malformed"), e.getMessage());
        assertEquals(Map.of("foo", "bar"), raw.hgetAll(store.stateKey("garbage")));

        Map<String, String> bad = new java.util.HashMap<>(StateCodec.toFields(BreakerState.INITIAL));
        bad.put("failures", "twelve");
        raw.hset(store.stateKey("badnum"), bad);
        assertThrows(StoreException.class, () -> store.get("badnum"));
        assertThrows(StoreException.class, () -> store.apply("badnum", AtomicOperation.failure(), p, 1));
        bad.put("failures", "0");
        bad.put("errorRate", "1.5");
        raw.hset(store.stateKey("badnum"), bad);
        assertThrows(StoreException.class, () -> store.get("badnum"));
        assertThrows(StoreException.class, () -> store.apply("badnum", AtomicOperation.trialFailed(0), p, 1));

        raw.set(store.claimsKey("claims"), "x");
        assertThrows(StoreException.class, () -> store.claimTrial("claims", 1, Duration.ofSeconds(1)));
        assertThrows(StoreException.class, () -> store.claimTrial("claims", 2, Duration.ofSeconds(1)));
        raw.hset(store.claim1Key("claim1"), Map.of("not", "a token"));
        StoreException c1 = assertThrows(StoreException.class, () -> store.claimTrial("claim1", 1, Duration.ofSeconds(1)));
        assertTrue(c1.getMessage().contains("malformed"), c1.getMessage());
        assertThrows(StoreException.class, () -> store.claimTrial("claim1", 3, Duration.ofSeconds(1)));
        assertThrows(StoreException.class, () -> store.releaseTrial("claim1", "t"));
        assertEquals(Map.of("not", "a token"), raw.hgetAll(store.claim1Key("claim1")));

        // A put replaces whatever was there.
        store.put("str", BreakerState.INITIAL, Duration.ofMinutes(1));
        assertEquals(BreakerState.INITIAL, store.get("str").orElseThrow());
    }

    @Test
    void aStateWithoutVersionReadsAsUnknownAndTheNextTransitionMakesItOne() {
        RedisStore store = newStore();
        Map<String, String> f = new java.util.HashMap<>(StateCodec.toFields(BreakerState.INITIAL.toBuilder()
                .failures(3).lastFailureAt(10).build()));
        f.remove("version");
        raw.hset(store.stateKey("old"), f);
        assertEquals(BreakerState.UNKNOWN_VERSION, store.get("old").orElseThrow().version());
        StateChange c = store.apply("old", AtomicOperation.failure(), Policy.builder().failureThreshold(4).build(), 20);
        assertEquals(TransitionKind.OPENED, c.transition());
        assertEquals(1, c.state().version());
    }

    // ------------------------------------------------------------ parity with Transitions
    // Random sequences of every operation against the Java model run as a property: RedisLuaParityTest (R8.1,
    // thousands of sequences). Here: a focused regression for the bit-exact EWMA.

    @Test
    void errorRateEwmaIsBitExactWithTheJavaRule() {
        RedisStore store = newStore();
        // An awkward decay and a threshold never reached keep the rate moving through many roundings.
        Policy p = Policy.builder().strategy(dev.redeye.api.Strategy.ERROR_RATE).errorRateDecay(0.8713)
                .errorRateThreshold(1.0).minimumCalls(1_000).build();
        java.util.Random rnd = new java.util.Random(42);
        BreakerState expected = null;
        for (int i = 0; i < 300; i++) {
            boolean success = rnd.nextInt(3) != 0;
            StateChange got = store.apply("ewma", AtomicOperation.outcome(success), p, 1_000 + i);
            BreakerState from = expected != null ? expected : got.previous(); // a new key: the server's base
            StateChange want = dev.redeye.spi.Transitions.recordOutcome(from, success, p, 1_000 + i);
            assertEquals(want, got, "call #" + i);
            assertEquals(Double.doubleToRawLongBits(want.state().errorRate()),
                    Double.doubleToRawLongBits(got.state().errorRate()), "bit-exact rate at call #" + i);
            expected = want.state();
        }
        assertEquals(Double.doubleToRawLongBits(expected.errorRate()),
                Double.doubleToRawLongBits(store.get("ewma").orElseThrow().errorRate()), "stored rate round-trips");
    }

    // ------------------------------------------------------------ claims

    @Test
    void claimsExpireByTheServerClockAndAStaleReleaseCannotFreeANewerClaim() throws Exception {
        RedisStore store = newStore();
        String first = store.claimTrial("exp", 1, Duration.ofMillis(150)).orElseThrow();
        assertTrue(store.claimTrial("exp", 1, Duration.ofMillis(150)).isEmpty());
        String[] second = new String[1];
        await(() -> {
            Optional<String> t = store.claimTrial("exp", 1, Duration.ofSeconds(30));
            t.ifPresent(v -> second[0] = v);
            return t.isPresent();
        }, "the expired claim to free its permit");
        store.releaseTrial("exp", first);
        assertTrue(store.claimTrial("exp", 1, Duration.ofSeconds(30)).isEmpty(), "stale release freed nothing");
        store.releaseTrial("exp", second[0]);
        assertTrue(store.claimTrial("exp", 1, Duration.ofSeconds(30)).isPresent());
    }

    @Test
    void claimRaceHasExactlyPermitsWinnersAcrossTwoClients() throws Exception {
        RedisStore a = newStore();
        RedisStore b = newStore();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            for (int permits : new int[] {1, 3}) {
                String key = "race-" + permits;
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Optional<String>>> fs = new ArrayList<>();
                for (int i = 0; i < 24; i++) {
                    RedisStore s = i % 2 == 0 ? a : b;
                    fs.add(pool.submit(() -> {
                        go.await();
                        return s.claimTrial(key, permits, Duration.ofSeconds(30));
                    }));
                }
                go.countDown();
                Set<String> tokens = new HashSet<>();
                for (Future<Optional<String>> f : fs) {
                    f.get(30, TimeUnit.SECONDS).ifPresent(tokens::add);
                }
                assertEquals(permits, tokens.size(), "winners for permits=" + permits);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    // ------------------------------------------------------------ state TTL

    @Test
    void putAndAtomicWritesRefreshTheStateTtl() {
        RedisStore store = newStore();
        store.put("ttl", BreakerState.INITIAL, Duration.ofSeconds(60));
        long t = raw.pttl(store.stateKey("ttl"));
        assertTrue(t > 0 && t <= 60_000, "put ttl " + t);
        Policy p = Policy.builder().stateTtl(Duration.ofHours(30)).build();
        store.apply("ttl", AtomicOperation.failure(), p, 1);
        t = raw.pttl(store.stateKey("ttl"));
        assertTrue(t > 60_000 && t <= p.stateTtlMillis(), "atomic write refreshed ttl to the policy's: " + t);
        assertThrows(IllegalArgumentException.class, () -> store.put("ttl", BreakerState.INITIAL, Duration.ZERO));
        assertThrows(NullPointerException.class, () -> store.put("ttl", BreakerState.INITIAL, null));
        assertThrows(IllegalArgumentException.class, () -> store.claimTrial("ttl", 0, Duration.ofSeconds(1)));
    }

    // ------------------------------------------------------------ feed

    @Test
    void feedReaderSurvivesClientKillWithAGapThenResumes() throws Exception {
        RedisStore store = newStore();
        RedisStore writer = newStore();
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        AtomicInteger gaps = new AtomicInteger();
        store.subscribe(events::add, gaps::incrementAndGet);
        Policy p = Policy.builder().failureThreshold(1).build();

        writer.apply("k1", AtomicOperation.failure(), p, 1);
        await(() -> events.size() == 1, "the first event");

        assertTrue(RedisTestSupport.killClient(raw, store.feedClientName()), "the named feed connection exists");
        await(() -> gaps.get() >= 1, "onGap after CLIENT KILL");
        writer.apply("k2", AtomicOperation.failure(), p, 2);
        await(() -> events.stream().anyMatch(e -> e.operation().equals("k2")), "events after the reconnect");
        assertTrue(store.isFeedReaderAlive());
        assertEquals(1, RedisTestSupport.clientIds(raw, store.feedClientName()).size(), "reconnected under its name");
    }

    @Test
    void aSilentlyDeadFeedConnectionOnAUserSuppliedPoolSignalsAGapAndRecovers() throws Exception {
        RedisStoreProvider.Parsed parsed = RedisStoreProvider.parse(RedisTestSupport.url());
        RedisStore writer = newStore();
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        AtomicInteger gaps = new AtomicInteger();
        Policy p = Policy.builder().failureThreshold(1).build();
        try (FreezableProxy proxy = new FreezableProxy(parsed.address().getHost(), parsed.address().getPort());
                JedisPooled viaProxy = new JedisPooled(new HostAndPort("127.0.0.1", proxy.port()),
                        DefaultJedisClientConfig.builder().from(parsed.config()).socketTimeoutMillis(500).build());
                RedisStore store = RedisStore.builder(viaProxy).prefix(prefix)
                        .feedBlock(Duration.ofMillis(200))
                        .feedBackoff(Duration.ofMillis(10), Duration.ofMillis(200))
                        .build()) {
            store.subscribe(events::add, gaps::incrementAndGet);
            writer.apply("p1", AtomicOperation.failure(), p, 1);
            await(() -> events.size() == 1, "the first event through the proxy");

            proxy.freeze(); // the TCP connection stays up but nothing answers: a partition
            long frozenAt = System.nanoTime();
            await(() -> gaps.get() >= 1, "onGap while the feed connection is silently dead");
            long toGapMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frozenAt);
            assertTrue(toGapMillis < 5_000, "a dead read is noticed after block + margin, took " + toGapMillis + " ms");

            proxy.unfreeze();
            writer.apply("p2", AtomicOperation.failure(), p, 2);
            await(() -> events.stream().anyMatch(e -> e.operation().equals("p2")), "events after the partition heals");
            assertTrue(store.isFeedReaderAlive());
        }
    }

    @Test
    void aReaderThatFallsBehindTheTrimmingWhileConnectedSignalsAGap() throws Exception {
        RedisStore store = RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true)
                .feedMaxLength(5)
                .feedBlock(Duration.ofMillis(200))
                .build();
        stores.add(store);
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        AtomicInteger gaps = new AtomicInteger();
        CountDownLatch hold = new CountDownLatch(1);
        store.subscribe(e -> {
            events.add(e);
            if (events.size() == 1) {
                try {
                    hold.await(10, TimeUnit.SECONDS); // a slow subscriber: the reader stays connected but behind
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
            }
        }, gaps::incrementAndGet);
        Policy p = Policy.defaults();
        store.apply("trim", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 1);
        await(() -> events.size() == 1, "the first event");
        int published = 600;
        for (int i = 0; i < published; i++) {
            store.apply("trim", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 2 + i);
        }
        assertTrue(raw.xlen(store.feedKey()) < published, "MAXLEN ~ 5 trimmed the stream");
        assertEquals(0, gaps.get());
        hold.countDown();
        await(() -> gaps.get() >= 1, "onGap once the reader finds the stream trimmed past its position");
        long last = 2 + published - 1;
        await(() -> !events.isEmpty() && events.get(events.size() - 1).state().openedAt() == last,
                "the reader still delivers what is left");
        assertTrue(events.size() < published + 1, "entries were trimmed unseen: " + events.size());
    }

    @Test
    void aThrowingSubscriberIsLoggedAndOthersKeepReceiving() throws Exception {
        RedisStore store = newStore();
        List<TransitionEvent> got = new CopyOnWriteArrayList<>();
        AtomicInteger thrown = new AtomicInteger();
        store.subscribe(e -> {
            thrown.incrementAndGet();
            throw new IllegalStateException("subscriber bug (expected by the test)");
        }, () -> { });
        TransitionFeed.Subscription s2 = store.subscribe(got::add, () -> { });
        Policy p = Policy.builder().failureThreshold(1).build();
        store.apply("t1", AtomicOperation.failure(), p, 1);
        store.apply("t2", AtomicOperation.failure(), p, 2);
        await(() -> got.size() == 2 && thrown.get() == 2, "both events on both subscribers");
        s2.close();
        s2.close();
        store.apply("t3", AtomicOperation.failure(), p, 3);
        await(() -> thrown.get() == 3, "the throwing subscriber still subscribed");
        assertEquals(2, got.size(), "the closed subscription received nothing more");
    }

    @Test
    void eventsOfOneOperationThatLandInTheStreamSwappedArriveInVersionOrder() throws Exception {
        RedisStore store = newStore();
        List<Long> got = new CopyOnWriteArrayList<>();
        store.subscribe(e -> {
            if (e.operation().equals("swapped")) {
                got.add(e.version());
            }
        }, () -> { });
        // Two clients' transitions of one operation whose XADDs (a second call after the state function) land swapped,
        // plus a duplicate: the reader delivers each version once, in order, and drops the late, older one.
        for (long v : new long[] {5, 4, 6, 6, 7}) {
            TransitionEvent e = new TransitionEvent("swapped", TransitionKind.FORCED_HALF_OPEN, BreakerStatus.OPEN,
                    BreakerState.builder().open(true).version(v).build());
            raw.xadd(store.feedKey(), StreamEntryID.NEW_ENTRY, StateCodec.eventToFields(e));
        }
        await(() -> got.contains(7L), "the last event");
        assertEquals(List.of(5L, 6L, 7L), got, "events of one operation in version order, each once");
    }

    @Test
    void feedFromAJedisPooledAndFromExplicitDetailsAndNoneFromAPlainUnifiedJedis() throws Exception {
        RedisStoreProvider.Parsed parsed = RedisStoreProvider.parse(RedisTestSupport.url());
        RedisStore explicit = RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true)
                .feedConnection(parsed.address(), parsed.config()).build();
        stores.add(explicit);
        RedisStore pooled = newStore();
        List<TransitionEvent> a = new CopyOnWriteArrayList<>();
        List<TransitionEvent> b = new CopyOnWriteArrayList<>();
        explicit.capability(TransitionFeed.class).orElseThrow().subscribe(a::add, () -> { });
        pooled.capability(TransitionFeed.class).orElseThrow().subscribe(b::add, () -> { });
        pooled.apply("f", AtomicOperation.force(BreakerStatus.FORCED_OPEN), Policy.defaults(), 1);
        await(() -> a.size() == 1 && b.size() == 1, "the event on both readers");
        assertEquals(TransitionKind.FORCED_OPEN, a.get(0).kind());
        assertEquals(pooled.get("f").orElseThrow().version(), a.get(0).version());

        try (redis.clients.jedis.UnifiedJedis plain = new redis.clients.jedis.UnifiedJedis(parsed.address(), parsed.config());
                RedisStore s = RedisStore.builder(plain).prefix(prefix).build()) {
            assertTrue(s.capability(TransitionFeed.class).isEmpty());
            assertTrue(s.capability(dev.redeye.spi.AtomicUpdates.class).isPresent());
            assertThrows(StoreException.class, () -> s.subscribe(e -> { }, () -> { }));
        }
    }

    // ------------------------------------------------------------ close

    @Test
    void closeStopsTheReaderFreesItsConnectionAndFailsEveryMethodFast() throws Exception {
        RedisStore store = newStore();
        store.subscribe(e -> { }, () -> { });
        assertTrue(store.isFeedReaderAlive());
        Thread reader = findThread(store.feedClientName());
        assertTrue(reader != null && reader.isAlive());
        store.close();
        store.close();
        assertFalse(reader.isAlive(), "reader thread gone");
        assertTrue(RedisTestSupport.clientIds(raw, store.feedClientName()).isEmpty(), "feed connection gone from CLIENT LIST");
        Policy p = Policy.defaults();
        assertThrows(StoreException.class, () -> store.get("x"));
        assertThrows(StoreException.class, () -> store.put("x", BreakerState.INITIAL, Duration.ofSeconds(1)));
        assertThrows(StoreException.class, () -> store.delete("x"));
        assertThrows(StoreException.class, () -> store.apply("x", AtomicOperation.failure(), p, 1));
        assertThrows(StoreException.class, () -> store.apply("x", AtomicOperation.success(), p, 1));
        assertThrows(StoreException.class, () -> store.apply("x", AtomicOperation.outcome(true), p, 1));
        assertThrows(StoreException.class, () -> store.apply("x", AtomicOperation.trialSucceeded(0), p, 1));
        assertThrows(StoreException.class, () -> store.apply("x", AtomicOperation.trialFailed(0), p, 1));
        assertThrows(StoreException.class, () -> store.apply("x", AtomicOperation.force(BreakerStatus.CLOSED), p, 1));
        assertThrows(StoreException.class, () -> store.claimTrial("x", 1, Duration.ofSeconds(1)));
        assertThrows(StoreException.class, () -> store.releaseTrial("x", "t"));
        assertThrows(StoreException.class, () -> store.subscribe(e -> { }, () -> { }));
    }

    @Test
    void closingAStoreOverAUserOwnedPoolDestroysTheBorrowedFeedConnectionAndLeavesThePoolUsable() throws Exception {
        try (JedisPooled owned = RedisTestSupport.raw()) {
            RedisStore store = RedisStore.builder(owned).prefix(prefix).build();
            store.subscribe(e -> { }, () -> { });
            assertEquals(1, RedisTestSupport.clientIds(raw, store.feedClientName()).size());
            store.close();
            // the server drops the client from CLIENT LIST once it has read the close: poll, do not race it
            await(() -> RedisTestSupport.clientIds(raw, store.feedClientName()).isEmpty(),
                    "the named connection was destroyed, not returned to the pool");
            assertEquals("PONG", owned.ping(), "the caller's pool is still open");
        }
    }

    @Test
    void subscribingWhenTheFeedServerIsUnreachableIsAStoreException() {
        RedisStoreProvider.Parsed parsed = RedisStoreProvider.parse("redis://127.0.0.1:1?timeout=300");
        RedisStore store = RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true)
                .feedConnection(parsed.address(), parsed.config()).build();
        stores.add(store);
        StoreException e = assertThrows(StoreException.class, () -> store.subscribe(ev -> { }, () -> { }));
        assertTrue(e.getMessage().contains("127.0.0.1:1"), e.getMessage());
        assertFalse(store.isFeedReaderAlive());
        assertTrue(store.get("still-works").isEmpty(), "the store itself is unaffected");
    }

    private static Thread findThread(String name) {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals(name)) {
                return t;
            }
        }
        return null;
    }

    /** The server clock in microseconds, as the state function reads it for a version base. */
    private long serverMicros() {
        return (Long) raw.eval("local t = redis.call('TIME') return tonumber(t[1]) * 1000000 + tonumber(t[2])");
    }

    @Test
    void versionsOnlyMoveOnTransitions() {
        RedisStore store = newStore();
        Policy p = Policy.builder().failureThreshold(3).build();
        long base = store.apply("v", AtomicOperation.failure(), p, 1).state().version();
        assertEquals(base, store.apply("v", AtomicOperation.failure(), p, 2).state().version());
        StateChange open = store.apply("v", AtomicOperation.failure(), p, 3);
        assertEquals(base + 1, open.state().version());
        assertEquals(base + 1, store.apply("v", AtomicOperation.failure(), p, 4).state().version(), "failure while open");
        StateChange noop = store.apply("none", AtomicOperation.success(), p, 5);
        assertFalse(noop.changed());
        assertFalse(raw.exists(store.stateKey("none")), "a no-op success writes nothing");
        assertNotEquals(open.state().version(), store.apply("v", AtomicOperation.force(BreakerStatus.CLOSED), p, 6).state().version());
    }

    @Test
    void concurrentFailuresFromTwoClientsAreCountedExactly() throws Exception {
        RedisStore a = newStore();
        RedisStore b = newStore();
        Policy p = Policy.builder().failureThreshold(1_000_000).build();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                RedisStore s = t % 2 == 0 ? a : b;
                fs.add(pool.submit(() -> {
                    for (int i = 0; i < 250; i++) {
                        s.apply("count", AtomicOperation.failure(), p, 1);
                    }
                }));
            }
            for (Future<?> f : fs) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(2_000, a.get("count").orElseThrow().failures());
    }

    @Test
    void forcingClosedRemovesClaims() {
        RedisStore store = newStore();
        store.claimTrial("fc", 1, Duration.ofSeconds(30)).orElseThrow();
        store.claimTrial("fc2", 2, Duration.ofSeconds(30)).orElseThrow();
        store.claimTrial("fc2", 2, Duration.ofSeconds(30)).orElseThrow();
        assertTrue(raw.exists(store.claim1Key("fc")));
        store.apply("fc", AtomicOperation.force(BreakerStatus.CLOSED), Policy.defaults(), 1);
        store.apply("fc2", AtomicOperation.force(BreakerStatus.CLOSED), Policy.defaults(), 1);
        assertFalse(raw.exists(store.claimsKey("fc")));
        assertFalse(raw.exists(store.claim1Key("fc")));
        assertFalse(raw.exists(store.claimsKey("fc2")));
        assertTrue(store.claimTrial("fc", 1, Duration.ofSeconds(30)).isPresent());
        assertTrue(store.claimTrial("fc2", 2, Duration.ofSeconds(30)).isPresent());
    }

    // ------------------------------------------------------------ forced states never expire

    @Test
    void aForcedStateIsStoredWithoutExpiryAndTheTtlReturnsWhenItStopsBeingForced() {
        RedisStore store = newStore();
        Policy p = Policy.builder().failureThreshold(2).resetTimeout(Duration.ofMillis(100))
                .maxResetTimeout(Duration.ofMillis(400)).stateTtl(Duration.ofSeconds(10)).build();
        String k = store.stateKey("f");
        store.apply("f", AtomicOperation.failure(), p, 1);
        assertTrue(raw.pttl(k) > 0, "an unforced state carries the clean-up ttl");

        assertTrue(store.apply("f", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 2).state().forced());
        assertEquals(-1, raw.pttl(k), "force OPEN persists the state key");
        store.apply("f", AtomicOperation.failure(), p, 3);
        store.apply("f", AtomicOperation.failure(), p, 4);
        store.apply("f", AtomicOperation.trialFailed(store.get("f").orElseThrow().version()), p, 5);
        assertEquals(3, store.get("f").orElseThrow().failures(), "failures counted while forced");
        assertEquals(-1, raw.pttl(k), "writes while forced keep it without expiry");
        raw.pexpire(k, 60_000); // a forced state stored before this rule: the next write persists it
        store.apply("f", AtomicOperation.success(), p, 6);
        assertEquals(-1, raw.pttl(k), "an unchanged forced state is persisted too");

        store.apply("f", AtomicOperation.force(BreakerStatus.CLOSED), p, 7);
        long t = raw.pttl(k);
        assertTrue(t > 0 && t <= 10_000, "reset: the clean-up ttl applies again: " + t);
        store.apply("f", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 8);
        assertEquals(-1, raw.pttl(k));
        store.apply("f", AtomicOperation.force(BreakerStatus.HALF_OPEN), p, 9);
        t = raw.pttl(k);
        assertTrue(t > 0 && t <= 10_000, "forced half-open is not forced: ttl again: " + t);
    }

    @Test
    void putOfAForcedStateIgnoresTheTtl() {
        RedisStore store = newStore();
        String k = store.stateKey("pf");
        BreakerState forced = BreakerState.INITIAL.toBuilder().open(true).openedAt(5).forced(true).version(3).build();
        store.put("pf", forced, Duration.ofSeconds(1));
        assertEquals(-1, raw.pttl(k), "a forced state is stored without expiry");
        assertEquals(forced, store.get("pf").orElseThrow());
        store.put("pf", BreakerState.INITIAL, Duration.ofSeconds(30));
        long t = raw.pttl(k);
        assertTrue(t > 0 && t <= 30_000, "an unforced put sets its ttl again: " + t);
    }

    // ------------------------------------------------------------ claims: SET NX for one permit, zset for several

    @Test
    void onePermitUsesSetNxAndMixedPermitsOnOneKeyNeverExceedTheirLimit() throws Exception {
        RedisStore store = newStore();
        // permits > 1 first: one live zset member blocks a one-permit claim.
        String z1 = store.claimTrial("mix", 3, Duration.ofSeconds(30)).orElseThrow();
        assertTrue(store.claimTrial("mix", 1, Duration.ofSeconds(30)).isEmpty(), "a live zset claim blocks SET NX");
        assertFalse(raw.exists(store.claim1Key("mix")));
        store.releaseTrial("mix", "unknown-token");
        assertEquals(1, raw.zcard(store.claimsKey("mix")), "an unknown token releases nothing");
        store.releaseTrial("mix", z1);
        assertEquals(0, raw.zcard(store.claimsKey("mix")));

        // the one-permit claim counts against several permits.
        String s1 = store.claimTrial("mix", 1, Duration.ofSeconds(30)).orElseThrow();
        assertEquals(s1, raw.get(store.claim1Key("mix")));
        assertTrue(store.claimTrial("mix", 1, Duration.ofSeconds(30)).isEmpty());
        String z2 = store.claimTrial("mix", 3, Duration.ofSeconds(30)).orElseThrow();
        String z3 = store.claimTrial("mix", 3, Duration.ofSeconds(30)).orElseThrow();
        assertTrue(store.claimTrial("mix", 3, Duration.ofSeconds(30)).isEmpty(), "SET claim + 2 zset claims = 3");
        assertTrue(store.claimTrial("mix", 2, Duration.ofSeconds(30)).isEmpty());

        // release is compare-and-delete on both structures.
        store.releaseTrial("mix", z2);
        assertEquals(s1, raw.get(store.claim1Key("mix")), "a zset token does not free the SET claim");
        store.releaseTrial("mix", s1);
        assertFalse(raw.exists(store.claim1Key("mix")));
        assertEquals(List.of(z3), raw.zrange(store.claimsKey("mix"), 0, -1));
        assertTrue(store.claimTrial("mix", 1, Duration.ofSeconds(30)).isEmpty(), "z3 still live");
        store.releaseTrial("mix", z3);

        // an expired zset member does not block a one-permit claim; a stale SET token frees nothing.
        store.claimTrial("mix", 3, Duration.ofMillis(200)).orElseThrow();
        assertTrue(store.claimTrial("mix", 1, Duration.ofSeconds(30)).isEmpty(), "the 200 ms zset claim is still live");
        Thread.sleep(300);
        String fresh = store.claimTrial("mix", 1, Duration.ofSeconds(30)).orElseThrow();
        store.releaseTrial("mix", "stale-" + fresh);
        assertEquals(fresh, raw.get(store.claim1Key("mix")));
    }

    @Test
    void mixedPermitRaceOnOneKeyNeverExceedsTheLargestLimit() throws Exception {
        RedisStore a = newStore();
        RedisStore b = newStore();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Optional<String>>> ones = new ArrayList<>();
            List<Future<Optional<String>>> threes = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                RedisStore s = i % 2 == 0 ? a : b;
                int permits = i % 4 < 2 ? 1 : 3;
                Future<Optional<String>> f = pool.submit(() -> {
                    go.await();
                    return s.claimTrial("mixrace", permits, Duration.ofSeconds(30));
                });
                (permits == 1 ? ones : threes).add(f);
            }
            go.countDown();
            int oneWins = 0;
            int threeWins = 0;
            for (Future<Optional<String>> f : ones) {
                oneWins += f.get(30, TimeUnit.SECONDS).isPresent() ? 1 : 0;
            }
            for (Future<Optional<String>> f : threes) {
                threeWins += f.get(30, TimeUnit.SECONDS).isPresent() ? 1 : 0;
            }
            assertTrue(oneWins <= 1, "at most one one-permit winner: " + oneWins);
            assertTrue(oneWins + threeWins <= 3 && oneWins + threeWins >= 1, "live claims " + oneWins + "+" + threeWins);
            long live = raw.zcard(a.claimsKey("mixrace")) + (raw.exists(a.claim1Key("mixrace")) ? 1 : 0);
            assertEquals(oneWins + threeWins, live, "every winner holds exactly one live claim");
        } finally {
            pool.shutdownNow();
        }
    }

    // ------------------------------------------------------------ operation names

    @Test
    void namesThatAreNotWellFormedUtf16AreRefusedAndNulRoundTrips() {
        RedisStore store = newStore();
        Policy p = Policy.defaults();
        for (String bad : List.of("a\uD800", "\uDC00a", "x\uD800\uD800\uDC00y", "\uDBFF")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> store.get(bad));
            assertTrue(e.getMessage().contains("UTF-16") && e.getMessage().contains("surrogate"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> store.put(bad, BreakerState.INITIAL, Duration.ofMinutes(1)));
            assertThrows(IllegalArgumentException.class, () -> store.delete(bad));
            assertThrows(IllegalArgumentException.class, () -> store.apply(bad, AtomicOperation.failure(), p, 1));
            assertThrows(IllegalArgumentException.class, () -> store.apply(bad, AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 1));
            assertThrows(IllegalArgumentException.class, () -> store.claimTrial(bad, 1, Duration.ofSeconds(1)));
            assertThrows(IllegalArgumentException.class, () -> store.releaseTrial(bad, "t"));
            assertThrows(IllegalArgumentException.class, () -> store.stateKey(bad));
        }
        // "a?" is its own breaker; a pair and U+0000 are fine.
        store.put("a?", BreakerState.INITIAL.toBuilder().failures(7).build(), Duration.ofMinutes(1));
        store.put("a\u0000", BreakerState.INITIAL.toBuilder().failures(8).build(), Duration.ofMinutes(1));
        store.put("a", BreakerState.INITIAL.toBuilder().failures(9).build(), Duration.ofMinutes(1));
        store.put("\uD83D\uDE00", BreakerState.INITIAL.toBuilder().failures(10).build(), Duration.ofMinutes(1));
        assertEquals(7, store.get("a?").orElseThrow().failures());
        assertEquals(8, store.get("a\u0000").orElseThrow().failures());
        assertEquals(9, store.get("a").orElseThrow().failures());
        assertEquals(10, store.get("\uD83D\uDE00").orElseThrow().failures());
        assertEquals(9, store.apply("a\u0000", AtomicOperation.failure(), Policy.builder().failureThreshold(100).build(), 1).state().failures());
        assertEquals(9, store.get("a").orElseThrow().failures(), "a and a\\u0000 stay distinct");
    }
}
