package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.testsupport.RedisProcess;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.redeye.CircuitBreaker;
import dev.redeye.StoreErrorPolicy;
import dev.redeye.api.StoreUnavailableException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.support.StateCodec;
import redis.clients.jedis.Jedis;

/**
 * Faults of a real redis-server under a breaker's load, for each store error policy: the server killed
 * (SIGKILL) mid-load and restarted on its port, and the server frozen (SIGSTOP, then SIGCONT) for longer than
 * the feed's read timeout. Always a private server on a free port ({@link RedisProcess}), never the shared one.
 * It runs with {@code appendonly yes} and {@code appendfsync always}: every write Redis acknowledged is on
 * disk before the reply, so a restart after SIGKILL reloads every count recorded before the fault (with
 * {@code --save ""} and no AOF a restart would start empty).
 *
 * <p>Per fault and policy it asserts: no call blocks longer than the documented bound (with a wide margin;
 * the measured worst case is printed, see the class output in {@code target/surefire-reports}); no exception
 * but the call's own reaches the caller, plus {@link StoreUnavailableException} under REJECT; the count
 * recorded before the fault is still there; the first call after the server is back runs and meets no store
 * error, on the loaded instance and on a second instance whose warm pool sat idle through the fault (its
 * pooled connections went stale with a killed server); the feed signalled a gap and delivers events again.
 *
 * <p>The store runs with {@code timeout=500}: the documented bound of one store operation is
 * {@code timeout} + min(250 ms, {@code timeout}) (the PING of a connection idle for {@code idleCheck}; plus
 * {@code timeout} more only while the pool is exhausted, which 4 load threads on a pool of 16 never are),
 * and a call on the closed path makes at most two store operations (the gate's read and the outcome's write).
 */
class RedisFaultTest {
    private static final int TIMEOUT_MS = 500;
    /** Two store operations of timeout + 250 ms check each. */
    private static final long BOUND_MS = 2L * (TIMEOUT_MS + 250);
    /** Wide margin for a loaded 2-core machine: GC, scheduling, fsync. */
    private static final long ASSERTED_MS = BOUND_MS + 2_500;
    /** Longer than the feed's read timeout (feedBlock 2 s + 1 s), so the reader notices the freeze. */
    private static final long FREEZE_MS = 3_500;
    private static final long DOWN_MS = 1_000;
    private static final int THREADS = 4;

    /** A private server for this class, killed after its last test. */
    @AutoClose
    static final RedisProcess SERVER = RedisProcess.start("--appendonly", "yes", "--appendfsync", "always");

    enum Fault { KILL_AND_RESTART, FREEZE }

    static Stream<Arguments> faults() {
        List<Arguments> out = new ArrayList<>();
        for (Fault f : Fault.values()) {
            for (StoreErrorPolicy p : StoreErrorPolicy.values()) {
                out.add(Arguments.of(f, p));
            }
        }
        return out.stream();
    }

    /** The call's own exception: always rethrown unchanged. */
    static final class OwnFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        OwnFailure() {
            super("the call's own failure", null, false, false);
        }
    }

    @ParameterizedTest(name = "{0} under {1}")
    @MethodSource("faults")
    void aFaultMidLoadIsBoundedInvisibleToCallersAndRecovered(Fault fault, StoreErrorPolicy policy) throws Exception {
        String prefix = RedisTestSupport.newPrefix();
        Map<String, AtomicInteger> storeErrors = new ConcurrentHashMap<>();
        List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        AtomicInteger gaps = new AtomicInteger();
        Map<String, AtomicInteger> idleStoreErrors = new ConcurrentHashMap<>();
        String uri = SERVER.url() + "?timeout=" + TIMEOUT_MS + "&prefix=" + prefix;
        try (RedisStore store = RedisStore.open(uri);
                CircuitBreaker breaker = breaker(store, policy, storeErrors);
                // a second instance with a warm pool and no traffic during the fault: its pooled connections
                // go stale when the server is killed, and must not fail its first call afterwards
                RedisStore idleStore = RedisStore.open(uri);
                CircuitBreaker idle = breaker(idleStore, policy, idleStoreErrors)) {
            warm(idle);
            for (int i = 0; i < 3; i++) {
                assertOwnFailure(breaker, "counted");
            }
            assertEquals("3", rawFailures(prefix, "counted"), "three failures recorded before the fault");
            store.subscribe(events::add, gaps::incrementAndGet);

            List<Load> loads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                Load l = new Load(breaker, "load-" + t, policy);
                loads.add(l);
                l.thread.start();
            }
            Thread.sleep(300);
            long faultAt = System.nanoTime();
            try {
                if (fault == Fault.KILL_AND_RESTART) {
                    SERVER.kill();
                    Thread.sleep(DOWN_MS);
                    SERVER.restart();
                } else {
                    SERVER.freeze();
                    Thread.sleep(FREEZE_MS);
                }
            } finally {
                if (fault == Fault.FREEZE) {
                    SERVER.thaw();
                }
            }
            long backAt = System.nanoTime();

            // the first call after the server is back: runs, and its store operations succeed
            long t0 = System.nanoTime();
            assertEquals("ok", breaker.execute("probe", () -> "ok"));
            assertOwnFailure(breaker, "probe");
            long probeMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(null, storeErrors.get("probe"), "no store error on the first calls after the server is back");
            assertEquals("1", rawFailures(prefix, "probe"), "the probe's failure reached the real store");
            assertEquals("ok", idle.execute("idle-probe", () -> "ok"), "the idle instance's first call runs");
            assertOwnFailure(idle, "idle-probe");
            assertEquals(Map.of(), Map.copyOf(idleStoreErrors), "no store error on the idle instance's first calls"
                    + " after the server is back: its stale pooled connections are replaced");
            assertEquals("1", rawFailures(prefix, "idle-probe"));

            Thread.sleep(300);
            loads.forEach(l -> l.stop = true);
            for (Load l : loads) {
                l.thread.join(10_000);
            }

            long worst = 0;
            long calls = 0;
            long rejected = 0;
            List<Throwable> unexpected = new ArrayList<>();
            for (Load l : loads) {
                worst = Math.max(worst, TimeUnit.NANOSECONDS.toMillis(l.worstNanos.get()));
                calls += l.calls.get();
                rejected += l.rejected.get();
                unexpected.addAll(l.unexpected);
            }
            worst = Math.max(worst, probeMs);
            int errors = storeErrors.values().stream().mapToInt(AtomicInteger::get).sum();
            System.out.printf("[redis-fault] %-16s %-6s calls=%d worst-call=%d ms (bound %d ms, asserted %d ms)"
                    + " store-errors=%d rejected=%d fault-lasted=%d ms%n", fault, policy, calls, worst, BOUND_MS,
                    ASSERTED_MS, errors, rejected, TimeUnit.NANOSECONDS.toMillis(backAt - faultAt));

            assertEquals(List.of(), unexpected, "only the call's own exception (and StoreUnavailableException under"
                    + " REJECT) reaches a caller");
            assertTrue(worst <= ASSERTED_MS, "worst call " + worst + " ms above " + ASSERTED_MS + " ms");
            assertTrue(errors > 0, "the fault was seen by the breaker as store errors");
            if (policy != StoreErrorPolicy.REJECT) {
                assertEquals(0, rejected, "only REJECT rejects");
            }
            assertEquals("3", rawFailures(prefix, "counted"), "the counts recorded before the fault survived it");
            assertTrue(breaker.state("counted").failures() >= 3);

            // the feed: a gap was signalled, and events flow again
            awaitTrue(() -> gaps.get() >= 1, "onGap for the fault");
            breaker.forceOpen("feed-after");
            awaitTrue(() -> events.stream().anyMatch(e -> e.operation().equals("feed-after")),
                    "the feed reconnected and delivers an event published after the fault");
        } finally {
            try (Jedis raw = new Jedis("127.0.0.1", SERVER.port())) {
                for (String k : raw.keys(prefix + "*")) {
                    raw.del(k);
                }
            }
        }
    }

    private static CircuitBreaker breaker(RedisStore store, StoreErrorPolicy policy, Map<String, AtomicInteger> errors) {
        return CircuitBreaker.builder().failureThreshold(1_000_000).store(store).closeStore(false)
                .storeErrorPolicy(policy)
                .onStoreError((op, t) -> errors.computeIfAbsent(op, o -> new AtomicInteger()).incrementAndGet())
                .build();
    }

    /** Leaves several idle connections in the breaker's pool: 8 calls at once, then nothing. */
    private static void warm(CircuitBreaker breaker) throws InterruptedException {
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Thread t = new Thread(() -> {
                for (int j = 0; j < 20; j++) {
                    breaker.execute("warm", () -> "ok");
                }
            });
            ts.add(t);
            t.start();
        }
        for (Thread t : ts) {
            t.join(30_000);
        }
    }

    private static void assertOwnFailure(CircuitBreaker breaker, String op) {
        try {
            breaker.execute(op, () -> {
                throw new OwnFailure();
            });
            throw new AssertionError("the call's own failure was swallowed");
        } catch (OwnFailure expected) {
            // rethrown unchanged
        }
    }

    private static String rawFailures(String prefix, String op) {
        try (Jedis raw = new Jedis("127.0.0.1", SERVER.port())) {
            return RedisTestSupport.field(raw.get(prefix + "{" + op + "}:state"), StateCodec.FAILURES);
        }
    }

    private static void awaitTrue(java.util.function.BooleanSupplier cond, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(10);
        }
    }

    /** One load thread: calls the breaker in a loop, every fifth call failing, timing each call. */
    private static final class Load implements Runnable {
        final Thread thread;
        final CircuitBreaker breaker;
        final String op;
        final StoreErrorPolicy policy;
        final AtomicLong worstNanos = new AtomicLong();
        final AtomicLong calls = new AtomicLong();
        final AtomicLong rejected = new AtomicLong();
        final List<Throwable> unexpected = new CopyOnWriteArrayList<>();
        volatile boolean stop;

        Load(CircuitBreaker breaker, String op, StoreErrorPolicy policy) {
            this.breaker = breaker;
            this.op = op;
            this.policy = policy;
            this.thread = new Thread(this, "fault-load-" + op);
            this.thread.setDaemon(true);
        }

        @Override
        public void run() {
            long i = 0;
            while (!stop) {
                boolean fail = i++ % 5 == 0;
                long t0 = System.nanoTime();
                try {
                    breaker.execute(op, () -> {
                        if (fail) {
                            throw new OwnFailure();
                        }
                        return "ok";
                    });
                } catch (OwnFailure own) {
                    // the call's own
                } catch (StoreUnavailableException e) {
                    if (policy == StoreErrorPolicy.REJECT) {
                        rejected.incrementAndGet();
                    } else {
                        unexpected.add(e);
                    }
                } catch (Throwable t) {
                    unexpected.add(t);
                }
                long took = System.nanoTime() - t0;
                worstNanos.accumulateAndGet(took, Math::max);
                calls.incrementAndGet();
                try {
                    Thread.sleep(2); // a steady load without burning both cores while the server is down
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }
}
