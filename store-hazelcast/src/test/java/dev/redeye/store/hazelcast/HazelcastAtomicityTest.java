package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.EntryView;
import com.hazelcast.core.HazelcastException;
import com.hazelcast.core.HazelcastInstance;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every store call is one atomic step on the map, also when a client stops between two of its map operations
 * (as a GC pause would) or loses its connection in the middle of a call: a forced state never receives another
 * client's expiry, and forcing CLOSED or deleting removes the key's trial claims in the same step as the state
 * change, never half of it.
 */
@ExtendWith(SharedClusters.class)
class HazelcastAtomicityTest {
    /** A short stateTtl, so that a forced state given an expiry by mistake is gone within seconds. */
    private static final Policy SHORT = Policy.builder().failureThreshold(1_000).jitter(0)
            .resetTimeout(Duration.ofMillis(100)).maxResetTimeout(Duration.ofMillis(200))
            .stateTtl(Duration.ofMillis(1_000)).build();
    private static final Policy P = Policy.builder().failureThreshold(3).jitter(0).build();
    /** More map operations than any one store call makes: every point between two of them is tried. */
    private static final int MAX_CALLS = 5;

    private static String map(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static HazelcastInstance[] clients(String cluster) {
        if (cluster.equals("embedded")) {
            return new HazelcastInstance[] {SharedClusters.embedded().clientA(), SharedClusters.embedded().clientB()};
        }
        return new HazelcastInstance[] {SharedClusters.bare().clientA(), SharedClusters.bare().clientB()};
    }

    static Stream<String> casClusters() {
        return Stream.of("bare", "embedded");
    }

    static Stream<Arguments> everyMode() {
        return Stream.of(Arguments.of("embedded", HazelcastStore.Mode.NATIVE),
                Arguments.of("bare", HazelcastStore.Mode.CAS), Arguments.of("embedded", HazelcastStore.Mode.CAS));
    }

    /**
     * Client A records a failure on an existing key and stops after its n-th map operation, for every n; while
     * it stands still, client B forces the breaker open; then A goes on. The forced state must have no expiry,
     * and must still be there, forced, once its stateTtl and Hazelcast's rounding have passed without a read.
     */
    @ParameterizedTest(name = "CAS mode on {0} members")
    @MethodSource("casClusters")
    void aWriteStoppedBetweenItsMapOperationsNeverGivesAForcedStateAnExpiry(String cluster) throws Exception {
        HazelcastInstance[] c = clients(cluster);
        String m = map("pause");
        PauseAfter pause = new PauseAfter();
        HazelcastStore a = HazelcastStore.builder(HookedInstance.wrap(c[0], pause)).map(m)
                .mode(HazelcastStore.Mode.CAS).build();
        HazelcastStore b = HazelcastStore.builder(c[1]).map(m).mode(HazelcastStore.Mode.CAS).build();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        List<String> keys = new ArrayList<>();
        try {
            for (int n = 1; n <= MAX_CALLS; n++) {
                String key = "after-call-" + n;
                keys.add(key);
                a.apply(key, AtomicOperation.failure(), SHORT, 1); // the key exists: A's next write replaces a value
                // Armed before the write is submitted, so that this thread waits on this write's latches, also
                // when the write starts late; the write's thread joins them when it starts.
                pause.arm(n);
                Future<?> write = pool.submit(() -> {
                    pause.attach();
                    try {
                        a.apply(key, AtomicOperation.failure(), SHORT, 2);
                    } finally {
                        pause.disarm();
                    }
                });
                boolean stopped = pause.awaitStopped(write);
                b.apply(key, AtomicOperation.force(BreakerStatus.FORCED_OPEN), SHORT, 3);
                pause.release();
                write.get(30, TimeUnit.SECONDS);
                EntryView<String, Object> v = c[1].<String, Object>getMap(m).getEntryView(key);
                assertEquals(Long.MAX_VALUE, v.getExpirationTime(), "A " + (stopped ? "stopped after" : "finished"
                        + " before") + " its map operation " + n + ": the forced state " + v.getValue()
                        + " was given an expiry");
            }
            // What a breaker would see: nothing reads the forced states until their stateTtl (1 s, plus the
            // second Hazelcast rounds expiry times to) is long past; every one of them is still forced.
            Thread.sleep(SHORT.stateTtlMillis() + 2 * MemberProcessor.EXPIRY_MARGIN_MILLIS + 500);
            for (String key : keys) {
                assertTrue(b.get(key).map(s -> s.forced() && s.open()).orElse(false),
                        key + ": the forced-open breaker closed by itself: " + b.get(key));
            }
        } finally {
            pause.release();
            pool.shutdownNow();
            a.close();
            b.close();
        }
    }

    /**
     * Force CLOSED with a trial claimed, the connection failing at each of the call's map operations in turn
     * (before the request leaves, or after the member applied it): the state is closed exactly when its claims
     * are gone.
     */
    @ParameterizedTest(name = "{1} mode on {0} members")
    @MethodSource("everyMode")
    void forceClosedRemovesTheClaimsInTheSameStep(String cluster, HazelcastStore.Mode mode) {
        assertDoneExactlyWhenTheClaimsAreGone(cluster, mode, "closed",
                (store, key) -> store.apply(key, AtomicOperation.force(BreakerStatus.FORCED_OPEN), P, 1),
                (store, key) -> store.apply(key, AtomicOperation.force(BreakerStatus.CLOSED), P, 2),
                (store, key) -> !store.get(key).orElseThrow().open(),
                "closed", "a call that returned must have closed the breaker");
    }

    /** The same for delete: the state is gone exactly when its claims are. */
    @ParameterizedTest(name = "{1} mode on {0} members")
    @MethodSource("everyMode")
    void deleteRemovesTheStateAndItsClaimsInOneStep(String cluster, HazelcastStore.Mode mode) {
        assertDoneExactlyWhenTheClaimsAreGone(cluster, mode, "delete",
                (store, key) -> store.apply(key, AtomicOperation.failure(), P, 1),
                HazelcastStore::delete,
                (store, key) -> store.get(key).isEmpty(),
                "state deleted", "a delete that returned must have deleted the state");
    }

    /** A store call on one key. */
    private interface KeyCall {
        void run(HazelcastStore store, String key);
    }

    /** A question about one key, asked of a store. */
    private interface KeyCheck {
        boolean test(HazelcastStore store, String key);
    }

    /**
     * For each of {@code call}'s map operations in turn, the connection failing before the request leaves and
     * after the member applied it: on a key that {@code prepare} set up through another client, with a trial
     * claimed, the call made through the faulty client must have done its work ({@code done}, named
     * {@code doneName} in messages) exactly when the key's claims are gone, and must have done it if it
     * returned ({@code returnedMustHave} otherwise).
     */
    private static void assertDoneExactlyWhenTheClaimsAreGone(String cluster, HazelcastStore.Mode mode, String mapName,
            KeyCall prepare, KeyCall call, KeyCheck done, String doneName, String returnedMustHave) {
        HazelcastInstance[] c = clients(cluster);
        String m = map(mapName);
        FailAt fail = new FailAt();
        HazelcastStore faulty = HazelcastStore.builder(HookedInstance.wrap(c[0], fail)).map(m).mode(mode).build();
        HazelcastStore other = HazelcastStore.builder(c[1]).map(m).mode(mode).build();
        try {
            for (int n = 1; n <= MAX_CALLS; n++) {
                for (boolean answerLost : new boolean[] {false, true}) {
                    String key = "fault-" + n + (answerLost ? "-after" : "-before");
                    prepare.run(other, key);
                    assertTrue(other.claimTrial(key, 1, Duration.ofMinutes(1)).isPresent());
                    boolean failed = false;
                    fail.arm(n, answerLost);
                    try {
                        call.run(faulty, key);
                    } catch (StoreException e) {
                        failed = true;
                    } finally {
                        fail.disarm();
                    }
                    boolean isDone = done.test(other, key);
                    boolean claimsGone = other.claimTrial(key, 1, Duration.ofMinutes(1)).isPresent();
                    String what = key + " (" + (failed ? "the call failed" : "the call succeeded") + ")";
                    assertEquals(isDone, claimsGone,
                            what + ": " + doneName + "=" + isDone + " but claims removed=" + claimsGone);
                    assertTrue(failed || isDone, what + ": " + returnedMustHave);
                }
            }
        } finally {
            faulty.close();
            other.close();
        }
    }

    /**
     * Stops the thread attached to it after that thread's n-th map operation, until released. {@link #arm} on the
     * test's thread before the write is handed to its thread, {@link #attach} on that thread: the test's thread
     * then waits for, and releases, this write's stop, however late the write's thread starts.
     */
    static final class PauseAfter implements HookedInstance.Hook {
        private volatile Thread armed;
        private int stopAt;
        private int seen;
        private volatile CountDownLatch stopped = new CountDownLatch(1);
        private volatile CountDownLatch resume = new CountDownLatch(1);

        /** A new stop after the n-th map operation; no thread is attached yet. */
        void arm(int n) {
            armed = null;
            stopped = new CountDownLatch(1);
            resume = new CountDownLatch(1);
            seen = 0;
            stopAt = n;
        }

        /** The calling thread's map operations count from now on. */
        void attach() {
            armed = Thread.currentThread();
        }

        void disarm() {
            armed = null;
        }

        /** Whether the armed thread stopped (false: its call ended before its n-th map operation). */
        boolean awaitStopped(Future<?> call) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                if (stopped.await(10, TimeUnit.MILLISECONDS)) {
                    return true;
                }
                if (call.isDone()) {
                    return false;
                }
            }
            throw new AssertionError("the paused call neither stopped nor ended in 30 s");
        }

        void release() {
            resume.countDown();
        }

        @Override
        public void after(String map, String method) {
            if (Thread.currentThread() != armed || ++seen != stopAt) {
                return;
            }
            stopped.countDown();
            try {
                if (!resume.await(30, TimeUnit.SECONDS)) {
                    throw new AssertionError("never released");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Fails the n-th map operation of the thread it is armed on: before it is sent, or after it was applied. */
    static final class FailAt implements HookedInstance.Hook {
        private volatile Thread armed;
        private int failAt;
        private boolean answerLost;
        private int seen;

        void arm(int n, boolean answerLost) {
            this.failAt = n;
            this.answerLost = answerLost;
            this.seen = 0;
            this.armed = Thread.currentThread();
        }

        void disarm() {
            armed = null;
        }

        @Override
        public void before(String map, String method) {
            if (Thread.currentThread() == armed && ++seen == failAt && !answerLost) {
                throw new HazelcastException("injected: the connection dropped before " + method + " was sent");
            }
        }

        @Override
        public void after(String map, String method) {
            if (Thread.currentThread() == armed && seen == failAt && answerLost) {
                throw new HazelcastException("injected: the connection dropped before the answer to " + method
                        + " arrived");
            }
        }
    }
}
