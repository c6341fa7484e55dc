package dev.redeye.store.dynamodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The feed's reads spread over its items with 1,000 subscribed store instances (issue 27): each instance is a
 * {@link DynamoDbStore} of its own, with its own poller thread and cursors, subscribed to the feed; they share one
 * {@code DynamoDbClient} (one HTTP client), since 1,000 SDK clients are more than this 2-core machine's test run
 * should carry, and the client holds no feed state. Every {@code GetItem} any of them sends is counted per item
 * by {@link GetItemCounter}, an SDK {@code ExecutionInterceptor} on that real client, over dynalite, from the
 * first subscription through a few poll intervals and 16 transitions (one per shard) that every subscriber must
 * receive.
 *
 * <p>The poll interval is 10 s, not the default 500 ms: at 500 ms, 1,000 instances ask for 34,000 reads a second,
 * far beyond one dynalite on a shared 2-core machine. The spread does not depend on the interval: each instance
 * reads its items in turn, one every {@code interval / 17}.
 */
class DynamoDbFeedFanOutTest {
    private static final Logger LOG = LoggerFactory.getLogger(DynamoDbFeedFanOutTest.class);
    private static final String TABLE = DynamoTestSupport.newTable("redeye_fanout");
    private static final int INSTANCES = Integer.getInteger("redeye.fanout.instances", 1_000);
    private static final Duration POLL = Duration.ofSeconds(10);

    @AfterAll
    static void dropTable() {
        DynamoTestSupport.deleteTable(TABLE);
    }

    @Test
    void aThousandSubscribersReadSeventeenFeedItemsAndNoItemTakesMoreThanOneSixteenthOfTheReads() throws Exception {
        GetItemCounter counter = new GetItemCounter();
        List<DynamoDbStore> stores = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try (DynamoDbClient client = DynamoDbShardedFeedTest.countedClient(counter)) {
            DynamoDbStore.builder(client).table(TABLE).createTable(true).build().close();
            Map<Integer, Set<String>> received = new ConcurrentHashMap<>();
            List<Future<DynamoDbStore>> opened = new ArrayList<>();
            for (int i = 0; i < INSTANCES; i++) {
                int id = i;
                opened.add(pool.submit(() -> {
                    DynamoDbStore s = DynamoDbStore.builder(client).table(TABLE).feedPollInterval(POLL)
                            .callDeadline(DynamoTestSupport.TEST_DEADLINE).build();
                    Set<String> mine = ConcurrentHashMap.newKeySet();
                    received.put(id, mine);
                    s.subscribe(e -> mine.add(e.operation()), () -> { });
                    return s;
                }));
            }
            for (Future<DynamoDbStore> f : opened) {
                stores.add(f.get());
            }
            long pollers = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals("redeye-dynamodb-feed " + TABLE) && t.isAlive()).count();
            assertEquals(INSTANCES, pollers, "one poller thread per subscribed store instance");
            long start = System.nanoTime();
            DynamoDbStore writer = stores.get(0);
            List<String> names = DynamoDbShardedFeedTest.onePerShard("fanout", Feed.DEFAULT_SHARDS);
            Policy one = Policy.builder().failureThreshold(1).jitter(0).build();
            for (String n : names) {
                writer.apply(n, AtomicOperation.failure(), one, 1_000_000L);
            }
            // three poll intervals: every instance reads every item about three times more
            Thread.sleep(3 * POLL.toMillis());
            Set<String> all = Set.copyOf(names);
            long late = received.values().stream().filter(r -> !r.containsAll(all)).count();
            Map<String, Long> reads = counter.reads().entrySet().stream().filter(e -> e.getKey().startsWith("f#"))
                    .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
            long total = reads.values().stream().mapToLong(Long::longValue).sum();
            long most = reads.values().stream().mapToLong(Long::longValue).max().orElse(0);
            double seconds = (System.nanoTime() - start) / 1e9;
            LOG.info("fan-out: {} instances, {} feed reads over {} items, the most read item {} ({}% of the reads, "
                    + "1/16 = 6.25%), {} reads/s after the subscriptions; {} instances missing an event",
                    INSTANCES, total, reads.size(), most, String.format("%.2f", 100.0 * most / total),
                    String.format("%.0f", (total - 17.0 * INSTANCES) / seconds), late);
            assertEquals(0, late, "instances that did not receive all 16 transitions within three poll intervals");
            assertEquals(Feed.DEFAULT_SHARDS + 1, reads.size(), "feed items read (16 shards and f#head): " + reads);
            assertTrue(total >= 3L * INSTANCES * reads.size(), "feed reads: the baseline and at least two rounds of "
                    + "every instance: " + total + " " + reads);
            assertTrue(most * 16 <= total, "the most read item took " + most + " of " + total + " feed reads, more "
                    + "than 1/16: " + reads);
        } finally {
            pool.shutdownNow();
            stores.forEach(DynamoDbStore::close);
        }
    }
}
