package dev.redeye.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.StoreErrorPolicy;
import dev.redeye.Stores;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * A breaker built over a store whose backend is down, the scenario every store's lazy-open test runs:
 * {@code Stores.open} does not fail, calls follow {@link StoreErrorPolicy#ALLOW} and reach
 * {@code onStoreError}, and once the backend is up the breaker uses it, feed and local cache included. The
 * test starts its backend between {@link #whileDown} and {@link #usedOnceUp}.
 */
public final class LazyOpenScenario implements AutoCloseable {
    /** How long {@link #await} waits. */
    public static final Duration PATIENCE = Duration.ofSeconds(60);

    private final Store store;
    private final CircuitBreaker breaker;
    private final List<TransitionEvent> fleet;

    private LazyOpenScenario(Store store, CircuitBreaker breaker, List<TransitionEvent> fleet) {
        this.store = store;
        this.breaker = breaker;
        this.fleet = fleet;
    }

    /**
     * Opens {@code uri} with {@code Stores.open} while its backend is down, builds a breaker over it (ALLOW on
     * store errors, failure threshold 2, a 30 s local cache) and runs three calls, which must run and each
     * reach {@code onStoreError}.
     *
     * @param uri     the store's URI; nothing answers at its address yet
     * @param backend what is down, as the assertion messages name it ("Redis", "the cluster")
     */
    public static LazyOpenScenario whileDown(String uri, String backend) {
        AtomicInteger storeErrors = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        List<TransitionEvent> fleet = new CopyOnWriteArrayList<>();
        Store store = Stores.open(uri);
        assertTrue(store.capability(TransitionFeed.class).isPresent(),
                "capabilities known while " + backend + " is down");
        CircuitBreaker b = CircuitBreaker.builder().store(store).storeErrorPolicy(StoreErrorPolicy.ALLOW)
                .failureThreshold(2).localCache(Duration.ofSeconds(30)).onFleetStateChange(fleet::add)
                .onStoreError((op, ex) -> storeErrors.incrementAndGet()).build();
        LazyOpenScenario scenario = new LazyOpenScenario(store, b, fleet);
        try {
            for (int i = 0; i < 3; i++) {
                assertEquals("ran", b.execute("op", () -> {
                    ran.incrementAndGet();
                    return "ran";
                }));
            }
            assertEquals(3, ran.get(), "ALLOW runs the calls while " + backend + " is down");
            assertTrue(storeErrors.get() >= 3, "onStoreError is told: " + storeErrors.get());
        } catch (RuntimeException | Error e) {
            scenario.close();
            throw e;
        }
        return scenario;
    }

    /** The store the breaker was built over. */
    public Store store() {
        return store;
    }

    /** The breaker under test. */
    public CircuitBreaker breaker() {
        return breaker;
    }

    /** The transitions of other instances the breaker was told of, as they arrive. */
    public List<TransitionEvent> fleet() {
        return fleet;
    }

    /**
     * Once the backend is up: the breaker reaches it ({@link #awaitReachable}), opens {@code op}
     * ({@link #recordOpening}), the opening reads back open through a client {@code direct} opens, the local
     * cache serves, and a transition another breaker over a client {@code other} opens reaches
     * {@code onFleetStateChange} over the feed.
     *
     * @param backend what came up, as the messages name it
     * @param client  opens a new client of the same data (closed here)
     */
    public void usedOnceUp(String backend, Callable<? extends Store> client) throws Exception {
        awaitReachable(backend);
        recordOpening();
        try (Store direct = client.call()) {
            assertTrue(direct.get("op").orElseThrow().open(), "the opening is stored in " + backend);
        }
        await(breaker::isLocalCacheActive, "the local cache serves once the feed runs");
        try (CircuitBreaker other = CircuitBreaker.builder().store(client.call()).failureThreshold(1).build()) {
            other.recordFailure("other-op");
        }
        await(() -> fleet.stream().anyMatch(e -> e.operation().equals("other-op")),
                "another instance's transition reaches onFleetStateChange over the feed");
    }

    /** Waits until the breaker reads the state of {@code op} without a store error. */
    public void awaitReachable(String backend) throws InterruptedException {
        await(() -> {
            try {
                breaker.state("op");
                return true;
            } catch (StoreException notYet) {
                return false;
            }
        }, "the breaker reaches " + backend + " once it is up");
    }

    /** Two failures of {@code op}: the breaker opens it. */
    public void recordOpening() {
        breaker.recordFailure("op");
        breaker.recordFailure("op");
        assertEquals(BreakerStatus.OPEN, breaker.status("op"));
    }

    /** Polls {@code condition} every 50 ms for up to {@link #PATIENCE}; fails naming {@code what} if it never holds. */
    public static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + PATIENCE.toSeconds() + " s: " + what);
            }
            Thread.sleep(50);
        }
    }

    /** Closes the breaker and with it the store. */
    @Override
    public void close() {
        breaker.close();
    }
}
