package dev.redeye.store.dynamodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.StoreErrorPolicy;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreUnavailableException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
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
            assertThrows(StoreException.class, () -> store.recordFailure("op", Policy.defaults(), 1L));
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
            store.recordFailure("op", p, 1L);
            server.signal("STOP");
            long start = System.nanoTime();
            StoreException e = assertThrows(StoreException.class, () -> store.recordFailure("op", p, 2L));
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(e.getMessage().contains("timed out"), e.getMessage());
            assertTrue(millis < 2_500, "a frozen server held the call for " + millis + " ms (call timeout 1 s)");
            server.signal("CONT");
            assertEquals(2, store.recordFailure("op", p, 3L).state().failures(), "recovered on the next call");
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
            store.recordFailure("op", p, 1L);
            long failuresBefore = store.usage().conditionFailures();
            proxy.loseNextAnswerOf("UpdateItem");
            assertEquals(2, store.recordFailure("op", p, 2L).state().failures(), "the returned count");
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

    private static void awaitCount(AtomicInteger n, int atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (n.get() < atLeast) {
            assertTrue(System.nanoTime() < deadline, "the load made no progress: " + n.get() + " calls");
            Thread.sleep(10);
        }
    }
}
