package dev.redeye.store.dynamodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.support.StateCodec;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The sharded feed on dynalite: every shard carries events to a subscriber; a lost event, a reset or another
 * shard count on one shard is a gap; the feed head of earlier releases during a rolling upgrade (their writers'
 * events delivered, their readers told of gaps) and not touched at all once {@code legacyFeedHead} is off; the
 * options' validation. Requests are counted per item by {@link GetItemCounter}, an SDK interceptor on the real
 * client. Each test works on a table of its own, since the feed items are per table.
 */
class DynamoDbShardedFeedTest {
    private static final long T0 = 1_000_000L;
    private static final Policy ONE = Policy.builder().failureThreshold(1).jitter(0).build();
    private static DynamoDbClient raw;
    private final List<DynamoDbClient> clients = new ArrayList<>();
    private final List<DynamoDbStore> stores = new ArrayList<>();
    private final List<String> tables = new ArrayList<>();
    private String table;

    @BeforeAll
    static void rawClient() {
        raw = DynamoTestSupport.rawClient();
    }

    @AfterAll
    static void closeRaw() {
        raw.close();
    }

    @AfterEach
    void closeAll() {
        stores.forEach(DynamoDbStore::close);
        clients.forEach(DynamoDbClient::close);
        tables.forEach(DynamoTestSupport::deleteTable);
    }

    private void newTable() {
        table = DynamoTestSupport.newTable("redeye_shards");
        tables.add(table);
        DynamoDbStore.builder(raw).table(table).createTable(true).build().close();
    }

    static DynamoDbClient countedClient(GetItemCounter counter) {
        return DynamoDbClient.builder().endpointOverride(URI.create(DynamoTestSupport.url())).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClientBuilder(UrlConnectionHttpClient.builder())
                .overrideConfiguration(o -> o.apiCallTimeout(Duration.ofSeconds(5)).addExecutionInterceptor(counter))
                .build();
    }

    private DynamoDbStore store(GetItemCounter counter, UnaryOperator<DynamoDbStore.Builder> config) {
        DynamoDbClient c = counter == null ? DynamoTestSupport.rawClient() : countedClient(counter);
        clients.add(c);
        DynamoDbStore s = config.apply(DynamoDbStore.builder(c).table(table).callDeadline(DynamoTestSupport.TEST_DEADLINE))
                .build();
        stores.add(s);
        return s;
    }

    /** One operation name per shard of {@code shards}: {@code names.get(i)} goes to shard {@code i}. */
    static List<String> onePerShard(String prefix, int shards) {
        String[] names = new String[shards];
        int found = 0;
        for (int i = 0; found < shards; i++) {
            String n = prefix + "-" + System.nanoTime() + "-" + i;
            int s = Keys.feedShard(n, shards);
            if (names[s] == null) {
                names[s] = n;
                found++;
            }
        }
        return List.of(names);
    }

    @Test
    void anEventOnEveryShardReachesASubscriberAndEachShardHoldsOnlyItsOwn() throws Exception {
        newTable();
        DynamoDbStore writer = store(null, b -> b);
        DynamoDbStore reader = store(null, b -> b.feedPollInterval(Duration.ofMillis(100)));
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        AtomicInteger gaps = new AtomicInteger();
        reader.subscribe(events::add, gaps::incrementAndGet);
        List<String> names = onePerShard("every", 16);
        for (String n : names) {
            writer.apply(n, AtomicOperation.failure(), ONE, T0);
        }
        await(() -> events.size() >= 16, "an event of each of the 16 shards");
        assertEquals(Set.copyOf(names), events.stream().map(TransitionEvent::operation).collect(Collectors.toSet()));
        for (int i = 0; i < 16; i++) {
            Map<String, software.amazon.awssdk.services.dynamodb.model.AttributeValue> shard = item(Keys.feedShardKey(i));
            assertEquals("1", shard.get(Feed.SEQ).n(), "shard " + i + " holds exactly its one event");
            assertEquals("16", shard.get(Feed.SHARDS).n());
            String line = shard.get(Feed.EVENTS).l().get(0).m().get(Feed.EVENT_LINE).s();
            assertEquals(names.get(i), StateCodec.eventFromLine(line, "test").operation());
        }
        assertEquals(0, gaps.get(), "no gap on a feed where nothing was lost");
    }

    @Test
    void aLostEventOnOneShardIsAGapForTheSubscriberAndTheOtherShardsGoOn() throws Exception {
        newTable();
        DynamoDbStore writer = store(null, b -> b);
        DynamoDbStore reader = store(null, b -> b.feedPollInterval(Duration.ofMillis(100)));
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        AtomicInteger gaps = new AtomicInteger();
        reader.subscribe(events::add, gaps::incrementAndGet);
        Thread.sleep(300);
        assertEquals(0, gaps.get(), "no gap on a quiet feed");
        // What Feed.publish does when it cannot append an event to shard 5: ADD lost 1 there.
        raw.updateItem(u -> u.tableName(table).key(Items.key(Keys.feedShardKey(5))).updateExpression("ADD #l :one")
                .expressionAttributeNames(Map.of("#l", Feed.LOST)).expressionAttributeValues(Map.of(":one", Items.n(1))));
        await(() -> gaps.get() == 1, "onGap after shard 5's lost count grew");
        String other = onePerShard("after-gap", 16).get(9);
        long v = writer.apply(other, AtomicOperation.failure(), ONE, T0).state().version();
        await(() -> events.stream().anyMatch(e -> e.operation().equals(other) && e.version() == v), "shard 9's event");
        Thread.sleep(300);
        assertEquals(1, gaps.get(), "one gap for one lost event");
    }

    @Test
    void fallingBehindOneShardsRingIsAGapThenItsNewestEvents() throws Exception {
        newTable();
        DynamoDbStore writer = store(null, b -> b.feedRingSize(3).feedShards(2));
        // Two shards read 3 s apart: the reader's first read comes 3 s after it subscribes, and the burst below
        // takes a fraction of that.
        DynamoDbStore reader = store(null, b -> b.feedShards(2).legacyFeedHead(false)
                .feedPollInterval(Duration.ofSeconds(6)));
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        AtomicInteger gaps = new AtomicInteger();
        reader.subscribe(events::add, gaps::incrementAndGet);
        String k = onePerShard("behind", 2).get(1);
        List<Long> versions = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < 3; i++) { // 6 transitions on shard 1: 3 more than its ring holds
            versions.add(writer.apply(k, AtomicOperation.failure(), ONE, T0 + i).state().version());
            versions.add(writer.apply(k, AtomicOperation.force(BreakerStatus.CLOSED), ONE, T0 + i).state().version());
        }
        long burstMillis = (System.nanoTime() - start) / 1_000_000;
        org.junit.jupiter.api.Assumptions.assumeTrue(burstMillis < 2_500, "the burst took " + burstMillis
                + " ms, longer than the reader's spacing of shard reads allows on this machine right now");
        await(() -> gaps.get() > 0 && events.size() >= 3, "a gap and the ring's events");
        Thread.sleep(3_500); // the other shard's read: quiet
        assertEquals(1, gaps.get(), "one gap for one fall behind the ring of one shard");
        assertEquals(versions.subList(3, 6), events.stream().map(TransitionEvent::version).toList());
    }

    @Test
    void aDeletedShardIsConfirmedByAConsistentReadAndIsAGap() throws Exception {
        newTable();
        GetItemCounter counter = new GetItemCounter();
        DynamoDbStore writer = store(null, b -> b);
        DynamoDbStore reader = store(counter, b -> b.feedPollInterval(Duration.ofMillis(100)));
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        AtomicInteger gaps = new AtomicInteger();
        reader.subscribe(events::add, gaps::incrementAndGet);
        String k = onePerShard("reset", 16).get(2);
        long v = writer.apply(k, AtomicOperation.failure(), ONE, T0).state().version();
        await(() -> events.stream().anyMatch(e -> e.version() == v), "the event before the reset");
        Thread.sleep(200);
        String pk = Keys.feedShardKey(2);
        long consistentBefore = counter.consistentReads().getOrDefault(pk, 0L);
        raw.deleteItem(d -> d.tableName(table).key(Items.key(pk)));
        await(() -> gaps.get() == 1, "a gap for the shard that went back");
        assertTrue(counter.consistentReads().getOrDefault(pk, 0L) > consistentBefore,
                "the step back was confirmed with a consistent read: " + counter.consistentReads());
        long v2 = writer.apply(k, AtomicOperation.force(BreakerStatus.CLOSED), ONE, T0).state().version();
        await(() -> events.stream().anyMatch(e -> e.version() == v2), "the event after the reset");
    }

    @Test
    void pollsAreEventuallyConsistentAndSpreadOneItemAtATime() throws Exception {
        newTable();
        GetItemCounter counter = new GetItemCounter();
        DynamoDbStore reader = store(counter, b -> b.feedPollInterval(Duration.ofMillis(340)));
        reader.subscribe(e -> { }, () -> { });
        Map<String, Long> baseline = counter.consistentReads();
        assertEquals(17, baseline.size(), "the baseline reads the 16 shards and f#head: " + baseline);
        assertTrue(baseline.values().stream().allMatch(n -> n == 1), "once each, consistently: " + baseline);
        counter.reset();
        Thread.sleep(1_500);
        Map<String, Long> reads = counter.reads();
        long total = reads.values().stream().mapToLong(Long::longValue).sum();
        assertEquals(Map.of(), counter.consistentReads(), "no consistent read on a quiet feed");
        // one read every 20 ms: about 75 in 1.5 s, each item about 4 or 5 times
        assertTrue(total >= 40 && total <= 90, "reads in 1.5 s at one per 20 ms: " + total);
        assertTrue(reads.values().stream().allMatch(n -> n >= 2 && n <= 6), "each item about once per 340 ms: " + reads);
        // spread, not in bursts: a store reading its 17 items back to back once per interval has the counts above,
        // but 16 of every 17 pauses between its reads are a request long (about 1 ms here), not 20 ms
        List<Long> times = counter.readTimes();
        List<Long> pauses = new ArrayList<>();
        for (int i = 1; i < times.size(); i++) {
            pauses.add((times.get(i) - times.get(i - 1)) / 1_000_000);
        }
        long shortPauses = pauses.stream().filter(ms -> ms < 10).count();
        assertTrue(shortPauses * 4 < pauses.size(), "pauses between reads shorter than 10 ms (one per 20 ms expected): "
                + shortPauses + " of " + pauses.size() + ": " + pauses);
    }

    /** The figures of the README's cost tables, as dynalite reports them through {@code usage()}. */
    @Test
    void aTransitionAndAPollCostWhatTheReadmeSays() throws Exception {
        newTable();
        DynamoDbStore writer = store(null, b -> b);
        String k = "cost-" + System.nanoTime();
        DynamoDbStore.Usage before = writer.usage();
        writer.apply(k, AtomicOperation.failure(), ONE, T0);
        DynamoDbStore.Usage after = writer.usage();
        assertEquals(5, after.requests() - before.requests(), "state read and write, shard read and write, f#head notice");
        assertEquals(2.0, after.readUnits() - before.readUnits(), 1e-9, "two consistent reads under 4 KB");
        assertEquals(3.0, after.writeUnits() - before.writeUnits(), 1e-9, "three writes under 1 KB");
        DynamoDbStore reader = store(null, b -> b.feedPollInterval(Duration.ofMillis(170)));
        reader.subscribe(e -> { }, () -> { });
        DynamoDbStore.Usage subscribed = reader.usage();
        assertEquals(17, subscribed.requests(), "the baseline: 17 items");
        assertEquals(17.0, subscribed.readUnits(), 1e-9, "the baseline: 17 consistent reads under 4 KB");
        await(() -> reader.usage().requests() >= 17 + 34, "two rounds of polls");
        DynamoDbStore.Usage polled = reader.usage();
        // Each poll that completes costs 0.5 RCU (eventually consistent, under 4 KB); a request that timed out on a
        // loaded machine and was sent again is counted as a request and costs nothing.
        long polls = polled.requests() - subscribed.requests();
        double units = polled.readUnits() - subscribed.readUnits();
        assertEquals(0.0, units % 0.5, 1e-9, "whole eventually consistent reads of 0.5 RCU: " + units);
        assertTrue(units <= 0.5 * polls + 1e-9, "no poll costs more than 0.5 RCU (a consistent read costs 1): "
                + units + " RCU for " + polls + " requests");
        assertTrue(units >= 0.5 * polls / 2, "most polls completed: " + units + " RCU for " + polls + " requests");
    }

    // ------------------------------------------------------------------------------------------ upgrade

    @Test
    void duringAnUpgradeAnEarlierReleasesWriterReachesThisReleasesSubscribers() throws Exception {
        newTable();
        DynamoDbStore reader = store(null, b -> b.feedPollInterval(Duration.ofMillis(100)));
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        AtomicInteger gaps = new AtomicInteger();
        reader.subscribe(events::add, gaps::incrementAndGet);
        EarlierReleaseFeed earlier = new EarlierReleaseFeed(raw, table);
        DynamoDbStore other = store(null, b -> b);
        String k = "earlier-writer-" + System.nanoTime();
        StateChange c = other.apply(k, AtomicOperation.failure(), ONE, T0); // to have a real event to append
        TransitionEvent e = c.toEvent(k, ONE, T0);
        await(() -> events.stream().anyMatch(x -> x.version() == e.version()), "this release's event");
        String k2 = "earlier-writer-2-" + System.nanoTime();
        TransitionEvent old = new TransitionEvent(k2, e.kind(), e.from(), e.state());
        earlier.append(old);
        await(() -> events.stream().anyMatch(x -> x.operation().equals(k2)), "the earlier release's event");
        assertEquals(0, gaps.get(), "this release's notices on f#head are not lost events");
        earlier.markLost();
        await(() -> gaps.get() == 1, "an event the earlier release's writer lost is a gap");
    }

    @Test
    void duringAnUpgradeAnEarlierReleasesSubscriberIsToldOfEveryTransitionAsAGap() throws Exception {
        newTable();
        DynamoDbStore writer = store(null, b -> b);
        EarlierReleaseFeed earlier = new EarlierReleaseFeed(raw, table);
        assertFalse(earlier.poll().gap());
        String k = "earlier-reader-" + System.nanoTime();
        writer.apply(k, AtomicOperation.failure(), ONE, T0);
        EarlierReleaseFeed.Poll p = earlier.poll();
        assertTrue(p.gap(), "the earlier reader cannot read the shard, so it is told of a gap (its engine re-reads)");
        assertFalse(earlier.poll().gap(), "one gap per transition");
        writer.apply(k, AtomicOperation.force(BreakerStatus.CLOSED), ONE, T0);
        assertTrue(earlier.poll().gap());
    }

    /**
     * The failing side of the test above: without the notice, an earlier release's reader sees nothing of a
     * transition written to a shard, which is why {@code legacyFeedHead} is on by default.
     */
    @Test
    void withoutTheLegacyHeadAnEarlierReleasesSubscriberMissesTransitionsSilently() {
        newTable();
        DynamoDbStore writer = store(null, b -> b.legacyFeedHead(false));
        EarlierReleaseFeed earlier = new EarlierReleaseFeed(raw, table);
        writer.apply("silent-" + System.nanoTime(), AtomicOperation.failure(), ONE, T0);
        EarlierReleaseFeed.Poll p = earlier.poll();
        assertFalse(p.gap());
        assertEquals(List.of(), p.lines());
    }

    @Test
    void withLegacyFeedHeadOffTheStoreNeverTouchesTheEarlierReleasesHead() throws Exception {
        newTable();
        GetItemCounter counter = new GetItemCounter();
        DynamoDbStore writer = store(counter, b -> b.legacyFeedHead(false));
        DynamoDbStore reader = store(counter, b -> b.legacyFeedHead(false).feedPollInterval(Duration.ofMillis(100)));
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        reader.subscribe(events::add, () -> { });
        String k = "no-head-" + System.nanoTime();
        long v = writer.apply(k, AtomicOperation.failure(), ONE, T0).state().version();
        await(() -> events.stream().anyMatch(e -> e.version() == v), "the event");
        Thread.sleep(300);
        assertFalse(counter.reads().containsKey(Keys.FEED_HEAD), "f#head read: " + counter.reads());
        assertFalse(counter.writes().containsKey(Keys.FEED_HEAD), "f#head written: " + counter.writes());
        assertEquals(16, counter.reads().keySet().stream().filter(pk -> pk.startsWith(Keys.FEED_SHARD)).count());
    }

    // ------------------------------------------------------------------------------------------ shard count

    @Test
    void aShardWrittenWithAnotherShardCountIsAGapOnEveryPollOfIt() throws Exception {
        newTable();
        DynamoDbStore writer = store(null, b -> b.feedShards(4));
        DynamoDbStore reader = store(null, b -> b.feedShards(2).feedPollInterval(Duration.ofMillis(100)));
        AtomicInteger gaps = new AtomicInteger();
        reader.subscribe(e -> { }, gaps::incrementAndGet);
        Thread.sleep(300);
        assertEquals(0, gaps.get());
        String k = onePerShard("mismatch", 4).get(1); // shard 1 of 4, which the reader with 2 shards reads too
        writer.apply(k, AtomicOperation.failure(), ONE, T0);
        await(() -> gaps.get() >= 3, "a gap on every poll of the shard written with feedShards=4");
    }

    @Test
    void shardCountsOutsideOneTo256AreRefusedWithTheRange() {
        DynamoDbStore.Builder b = DynamoDbStore.builder(raw);
        for (int bad : new int[] {0, -1, 257}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.feedShards(bad));
            assertTrue(e.getMessage().contains("feedShards must be between 1 and 256"), e.getMessage());
        }
        for (String bad : new String[] {"0", "257", "many", ""}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> DynamoDbStoreProvider.parse("dynamodb://t_table?region=us-east-1&feedShards=" + bad));
            assertTrue(e.getMessage().contains("feedShards"), e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DynamoDbStoreProvider.parse("dynamodb://t_table?region=us-east-1&legacyFeedHead=maybe"));
        assertTrue(e.getMessage().contains("legacyFeedHead must be true or false"), e.getMessage());
        DynamoDbStoreProvider.Parsed p = DynamoDbStoreProvider.parse("dynamodb://t_table?feedShards=256&legacyFeedHead=false");
        assertEquals(256, p.feedShards);
        assertFalse(p.legacyFeedHead);
        DynamoDbStoreProvider.Parsed d = DynamoDbStoreProvider.parse("dynamodb://t_table");
        assertEquals(16, d.feedShards);
        assertTrue(d.legacyFeedHead);
    }

    @Test
    void theShardOfANameIsStableAndSpreadsNames() {
        // fixed values: a change of the hash would split one operation's events over two shards in a mixed fleet
        assertEquals(Keys.feedShard("payment-gateway", 16), Keys.feedShard("payment-gateway", 16));
        int[] counts = new int[16];
        for (int i = 0; i < 16_000; i++) {
            counts[Keys.feedShard("op-" + i, 16)]++;
        }
        for (int c : counts) {
            assertTrue(c > 800 && c < 1200, "16,000 names over 16 shards: " + java.util.Arrays.toString(counts));
        }
    }

    // ------------------------------------------------------------------------------------------ support

    private Map<String, software.amazon.awssdk.services.dynamodb.model.AttributeValue> item(String pk) {
        return new HashMap<>(raw.getItem(g -> g.tableName(table).key(Items.key(pk)).consistentRead(true)).item());
    }

    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            Thread.sleep(20);
        }
    }
}
