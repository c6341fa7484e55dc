package dev.redeye.store.dynamodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.StoreErrorPolicy;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreUnavailableException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.tck.Race;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Failures of the endpoint, each on a server of the test's own (never the shared dynalite): throttling and an
 * endpoint that never answers surface as {@link StoreException} within the provider's call timeout; a frozen
 * (SIGSTOP) dynalite times out and recovers; a dynalite killed and restarted under load makes calls follow
 * the engine's store error policy and recover on the next call.
 */
class DynamoDbFaultTest {

    private static String uri(String endpoint, String table, String params) {
        return "dynamodb://test:test@" + table + "?region=us-east-1&endpoint=" + endpoint
                + (params.isEmpty() ? "" : "&" + params);
    }

    @Test
    void throttlingIsAStoreExceptionAfterTheClientsFewQuickRetries() throws Exception {
        try (FaultEndpoints.Throttling endpoint = new FaultEndpoints.Throttling();
             DynamoDbStore store = DynamoDbStore.open(uri(endpoint.url(), "thr", ""))) {
            long start = System.nanoTime();
            StoreException e = assertThrows(StoreException.class, () -> store.get("op"));
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(e.getMessage().contains("was throttled"), e.getMessage());
            assertTrue(e.getMessage().contains("ProvisionedThroughputExceededException"), e.getMessage());
            assertEquals(3, endpoint.requests.get(), "the provider's client makes 3 attempts");
            assertTrue(millis < 1_500, "throttled call took " + millis + " ms (the call timeout is 1 s)");
            assertThrows(StoreException.class, () -> store.apply("op", AtomicOperation.failure(), Policy.defaults(), 1L));
            assertThrows(StoreException.class, () -> store.claimTrial("op", 1, Duration.ofSeconds(1)));
        }
    }

    @Test
    void anEndpointThatNeverAnswersIsAStoreExceptionWithinTheOpenBudget() throws Exception {
        try (FaultEndpoints.Silent endpoint = new FaultEndpoints.Silent();
                // the provider's client, built first: building it costs seconds of CPU on a loaded machine
                DynamoDbClient client = DynamoDbStoreProvider.parse(uri(endpoint.url(), "thr", "")).client()) {
            long start = System.nanoTime();
            StoreException e = assertThrows(StoreException.class,
                    () -> DynamoDbStore.builder(client).table("thr").build());
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(e.getMessage().contains("timed out"), e.getMessage());
            long budget = Tables.OPEN_CALL_TIMEOUT.toMillis();
            assertTrue(millis < budget + 1_000, "a silent endpoint held the open for " + millis + " ms (the table"
                    + " check's budget is " + budget + " ms)");
        }
    }

    @Test
    void aFrozenDynaliteTimesOutAndTheStoreRecoversWhenItThaws() throws Exception {
        try (PrivateDynalite server = PrivateDynalite.start(false);
             DynamoDbStore store = DynamoDbStore.open(uri(server.url(), "frozen", "createTable=true"))) {
            Policy p = Policy.builder().failureThreshold(100).jitter(0).build();
            store.apply("op", AtomicOperation.failure(), p, 1L);
            server.signal("STOP");
            long start = System.nanoTime();
            StoreException e = assertThrows(StoreException.class, () -> store.apply("op", AtomicOperation.failure(), p, 2L));
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(e.getMessage().contains("timed out"), e.getMessage());
            assertTrue(millis < 2_500, "a frozen server held the call for " + millis + " ms (call timeout 1 s)");
            server.signal("CONT");
            assertEquals(2, store.apply("op", AtomicOperation.failure(), p, 3L).state().failures(), "recovered on the next call");
        }
    }

    /**
     * A client whose own timeouts are long (10 s per attempt) on a frozen dynalite: every store call still
     * ends, as a {@link StoreException}, within the store's default call deadline (2 s), not the client's.
     */
    @Test
    void onAFrozenDynaliteEveryCallEndsWithinTheDefaultCallDeadline() throws Exception {
        try (PrivateDynalite server = PrivateDynalite.start(false);
             DynamoDbStore store = DynamoDbStore.open(uri(server.url(), "frozen_deadline",
                     "createTable=true&attemptTimeoutMillis=10000&callTimeoutMillis=20000"))) {
            Policy p = Policy.builder().failureThreshold(100).jitter(0).build();
            store.apply("op", AtomicOperation.failure(), p, 1L);
            String token = store.claimTrial("op", 2, Duration.ofSeconds(30)).orElseThrow();
            server.signal("STOP");
            List<Executable> calls = List.of(
                    () -> store.get("op"),
                    () -> store.apply("op", AtomicOperation.failure(), p, 2L),
                    () -> store.claimTrial("op", 2, Duration.ofSeconds(30)),
                    () -> store.releaseTrial("op", token),
                    () -> store.put("op", BreakerState.INITIAL, Duration.ofMinutes(1)),
                    () -> store.delete("op"),
                    () -> store.subscribe(e -> { }, () -> { }));
            long worst = 0;
            for (Executable call : calls) {
                long start = System.nanoTime();
                StoreException e = assertThrows(StoreException.class, call);
                long millis = (System.nanoTime() - start) / 1_000_000;
                assertTrue(millis < 3_000, "a call on a frozen server took " + millis + " ms (default deadline 2 s): "
                        + e.getMessage());
                assertTrue(e.getMessage().contains("deadline"), e.getMessage());
                worst = Math.max(worst, millis);
            }
            System.out.println("frozen dynalite, client timeouts 10 s, default call deadline: slowest call " + worst
                    + " ms");
            server.signal("CONT");
            assertTrue(store.get("op").isPresent(), "recovered on the next call");
        }
    }

    /**
     * Every answer 1.2 s late (each under the client's 5 s timeouts): a transition, which takes four requests,
     * would take about 5 s; with {@code callDeadlineMillis=1000} it ends within the deadline.
     */
    @Test
    void onASlowEndpointATransitionEndsWithinTheCallDeadlineFromTheUri() throws Exception {
        int port = Integer.parseInt(DynamoTestSupport.url().replaceAll(".*:(\\d+).*", "$1"));
        String table = DynamoTestSupport.newTable("redeye_slow");
        try (LosingProxy proxy = new LosingProxy(port);
             DynamoDbStore store = DynamoDbStore.open(uri(proxy.url(), table,
                     "createTable=true&attemptTimeoutMillis=5000&callTimeoutMillis=10000&callDeadlineMillis=1000"))) {
            Policy p = Policy.builder().failureThreshold(1).jitter(0).build();
            proxy.delayAnswers(1_200);
            long start = System.nanoTime();
            try {
                store.apply("op", AtomicOperation.failure(), p, 1L);
            } catch (StoreException e) {
                assertTrue(e.getMessage().contains("deadline"), e.getMessage());
            }
            long millis = (System.nanoTime() - start) / 1_000_000;
            System.out.println("answers 1.2 s late, call deadline 1 s: the transition took " + millis + " ms");
            assertTrue(millis < 2_000, "a transition on a slow endpoint took " + millis + " ms (deadline 1 s)");
            proxy.delayAnswers(0);
        } finally {
            DynamoTestSupport.deleteTable(table);
        }
    }

    @Test
    void dynaliteKilledAndRestartedUnderLoadFollowsTheStoreErrorPolicyAndRecoversOnTheNextCall() throws Exception {
        try (PrivateDynalite server = PrivateDynalite.start(true);
             DynamoDbStore store = DynamoDbStore.open(uri(server.url(), "killed", "createTable=true"))) {
            AtomicInteger allowErrors = new AtomicInteger();
            AtomicInteger rejectErrors = new AtomicInteger();
            CircuitBreaker allow = CircuitBreaker.builder().store(store).failureThreshold(1000)
                    .storeErrorPolicy(StoreErrorPolicy.ALLOW).onStoreError((op, t) -> allowErrors.incrementAndGet())
                    .build();
            CircuitBreaker reject = CircuitBreaker.builder().store(store).failureThreshold(1000)
                    .storeErrorPolicy(StoreErrorPolicy.REJECT).onStoreError((op, t) -> rejectErrors.incrementAndGet())
                    .build();
            for (int i = 0; i < 3; i++) {
                allow.recordFailure("kept");
            }
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicInteger ran = new AtomicInteger();
            List<Throwable> leaked = new CopyOnWriteArrayList<>();
            Thread load = new Thread(() -> {
                while (running.get()) {
                    try {
                        allow.execute("load", () -> ran.incrementAndGet());
                    } catch (Throwable t) {
                        leaked.add(t); // ALLOW never lets a store error reach the caller
                    }
                }
            }, "load");
            load.start();
            awaitCount(ran, 20);
            server.kill();
            int errorsBefore = allowErrors.get();
            int ranAtKill = ran.get();
            awaitCount(ran, ranAtKill + 5);
            assertTrue(allowErrors.get() > errorsBefore, "calls during the outage were store errors under ALLOW");
            assertThrows(StoreUnavailableException.class, () -> reject.execute("load", () -> "must not run"),
                    "REJECT refuses to run a call while the store is down");

            server.startProcess(); // same port, same data folder
            int rejectErrorsAfter = rejectErrors.get();
            assertEquals("ran", reject.execute("load", () -> "ran"), "the next call after the restart runs under REJECT");
            assertEquals(rejectErrorsAfter, rejectErrors.get(), "and meets no store error");
            running.set(false);
            load.join(10_000);
            assertEquals(List.of(), leaked, "exceptions that reached the caller under ALLOW");
            assertTrue(store.get("kept").orElseThrow().failures() == 3, "the failures recorded before the kill survived "
                    + "the restart (dynalite with a data folder)");
            allow.close();
            reject.close();
        }
    }

    /**
     * A write that DynamoDB applied but whose answer was lost: the SDK retries the same conditional write, which
     * now fails its condition. Applying the rule again would count the failure twice (and a claim would take a
     * second permit); the call recognizes its own write ({@code lw}, the claim's token) instead.
     */
    @Test
    void aWriteWhoseAnswerWasLostIsNeitherRepeatedNorLost() throws Exception {
        int port = Integer.parseInt(DynamoTestSupport.url().replaceAll(".*:(\\d+).*", "$1"));
        String table = DynamoTestSupport.newTable("redeye_lost_answer");
        try (LosingProxy proxy = new LosingProxy(port);
             DynamoDbStore store = DynamoDbStore.open(uri(proxy.url(), table, "createTable=true"))) {
            Policy p = Policy.builder().failureThreshold(100).jitter(0).build();
            store.apply("op", AtomicOperation.failure(), p, 1L);
            long failuresBefore = store.usage().conditionFailures();
            proxy.loseNextAnswerOf("UpdateItem");
            assertEquals(2, store.apply("op", AtomicOperation.failure(), p, 2L).state().failures(), "the returned count");
            assertEquals(1, proxy.lost.get(), "the answer of the write was lost");
            assertEquals(failuresBefore + 1, store.usage().conditionFailures(), "the SDK's retry lost its condition");
            assertEquals(2, store.get("op").orElseThrow().failures(), "counted once, not twice");

            proxy.loseNextAnswerOf("UpdateItem");
            String token = store.claimTrial("claimed", 1, Duration.ofSeconds(30)).orElseThrow(
                    () -> new AssertionError("a claim whose answer was lost must still be the caller's"));
            assertEquals(java.util.Optional.empty(), store.claimTrial("claimed", 1, Duration.ofSeconds(30)));
            store.releaseTrial("claimed", token);
            assertTrue(store.claimTrial("claimed", 1, Duration.ofSeconds(30)).isPresent(), "the one permit is free again");
        } finally {
            DynamoTestSupport.deleteTable(table);
        }
    }

    /**
     * A lost answer on the call's last permitted attempt ({@code maxAttempts=1}): the SDK's retry fails its
     * condition and no attempt is left, but the write landed; the call must return it, not report that nothing
     * was written.
     */
    @Test
    void aLostAnswerOnTheLastAttemptIsReturnedNotReportedAsNothingWritten() throws Exception {
        int port = Integer.parseInt(DynamoTestSupport.url().replaceAll(".*:(\\d+).*", "$1"));
        String table = DynamoTestSupport.newTable("redeye_lost_last");
        try (LosingProxy proxy = new LosingProxy(port);
             DynamoDbStore store = DynamoDbStore.open(uri(proxy.url(), table, "createTable=true&maxAttempts=1"))) {
            Policy p = Policy.builder().failureThreshold(100).jitter(0).build();
            store.apply("op", AtomicOperation.failure(), p, 1L);
            proxy.loseNextAnswerOf("UpdateItem");
            assertEquals(2, store.apply("op", AtomicOperation.failure(), p, 2L).state().failures(), "the write that landed is returned");
            assertEquals(1, proxy.lost.get(), "the answer of the write was lost");
            assertEquals(2, store.get("op").orElseThrow().failures(), "counted once");
        } finally {
            DynamoTestSupport.deleteTable(table);
        }
    }

    /**
     * The same lost answer while 16 clients write the key: the relay holds the lost answer's connection until
     * 12 other writes have landed, so that by the time the SDK's retry fails its condition and the call re-reads
     * the item, more writers than any fixed memory of recent writers have written it. The count stays exact.
     */
    @Test
    void aLostAnswerAmongSixteenWritersIsAppliedExactlyOnce() throws Exception {
        int port = Integer.parseInt(DynamoTestSupport.url().replaceAll(".*:(\\d+).*", "$1"));
        String table = DynamoTestSupport.newTable("redeye_lost_16");
        int clients = 16;
        int each = 12;
        int heldFor = 12;
        List<DynamoDbStore> stores = new CopyOnWriteArrayList<>();
        try (LosingProxy proxy = new LosingProxy(port)) {
            // Timeouts far above dynalite's latency: no call may fail (a failed call's write is ambiguous, and the
            // count would not be exact for a reason this test is not about).
            String params = "attemptTimeoutMillis=8000&callTimeoutMillis=20000&callDeadlineMillis=60000";
            stores.add(DynamoDbStore.open(uri(proxy.url(), table, params + "&createTable=true")));
            for (int i = 1; i < clients; i++) {
                stores.add(DynamoDbStore.open(uri(proxy.url(), table, params)));
            }
            Policy p = Policy.builder().failureThreshold(1_000_000).jitter(0).build();
            stores.get(0).apply("op", AtomicOperation.failure(), p, 1L);
            proxy.loseNextAnswerOf("UpdateItem", heldFor);
            Race.run(clients, Duration.ofMinutes(3), t -> {
                for (int i = 0; i < each; i++) {
                    stores.get(t).apply("op", AtomicOperation.failure(), p, 2L + i);
                }
            });
            assertEquals(1, proxy.lost.get(), "one answer was lost");
            assertTrue(proxy.passedWhileHeld.get() >= heldFor, "writes that landed while the lost answer was held: "
                    + proxy.passedWhileHeld.get());
            assertEquals(1 + clients * each, stores.get(0).get("op").orElseThrow().failures(),
                    "every failure counted once: the write whose answer was lost neither repeated nor dropped");
        } finally {
            for (DynamoDbStore s : stores) {
                s.close();
            }
            DynamoTestSupport.deleteTable(table);
        }
    }

    private static void awaitCount(AtomicInteger n, int atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (n.get() < atLeast) {
            assertTrue(System.nanoTime() < deadline, "the load made no progress: " + n.get() + " calls");
            Thread.sleep(10);
        }
    }
}
