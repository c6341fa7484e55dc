package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreakerObserver.CallOutcome;
import dev.redeye.CircuitBreakerObserver.CallTiming;
import dev.redeye.CircuitBreakerObserver.TrialOutcome;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.StoreOperation;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** What a {@link CircuitBreakerObserver} is told, in local and distributed mode, and what it costs the call. */
class ObserverTest {
    private static final String OP = "orders";
    private final MutableClock clock = new MutableClock();

    /** Records every call as a line. */
    static final class Recorder implements CircuitBreakerObserver {
        final List<String> lines = new CopyOnWriteArrayList<>();
        final CallTiming timing;
        final java.util.concurrent.atomic.AtomicLong weights = new java.util.concurrent.atomic.AtomicLong();

        Recorder(CallTiming timing) {
            this.timing = timing;
        }

        @Override
        public CallTiming callTiming() {
            return timing;
        }

        @Override
        public void operationAdded(ObservedOperation op) {
            lines.add("added " + op.name());
        }

        @Override
        public void operationEvicted(ObservedOperation op) {
            lines.add("evicted " + op.name());
        }

        @Override
        public void callTimed(ObservedOperation op, CallOutcome outcome, long nanos, long weight) {
            assertTrue(nanos >= 0);
            weights.addAndGet(weight);
            lines.add("timed " + op.name() + " " + outcome + " x" + weight);
        }

        @Override
        public void callRejected(ObservedOperation op, RuntimeException rejection) {
            lines.add("rejected " + op.name());
        }

        @Override
        public void errorIgnored(ObservedOperation op, Throwable error) {
            lines.add("ignored " + op.name() + " " + error.getMessage());
        }

        @Override
        public void trialEnded(ObservedOperation op, TrialOutcome outcome) {
            lines.add("trial " + op.name() + " " + outcome);
        }

        @Override
        public void storeOperation(StoreOperation operation, boolean failed, long nanos) {
            lines.add("store " + operation.method() + (failed ? " failed" : ""));
        }

        @Override
        public void feedEvent(TransitionEvent event) {
            lines.add("feed " + event.kind());
        }

        List<String> drain() {
            List<String> out = List.copyOf(lines);
            lines.clear();
            return out;
        }
    }

    @Test
    void localModeTellsOperationsCallsTrialsAndNoStoreOperations() throws Exception {
        Recorder r = new Recorder(CallTiming.EVERY_CALL);
        try (CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                .recordFailure(t -> !(t instanceof IllegalArgumentException))
                .resetTimeout(Duration.ofSeconds(1)).build()) {
            b.execute("before", () -> "x");
            assertTrue(b.addObserver(r));
            assertFalse(b.addObserver(r), "registered once");
            assertEquals(List.of("added before"), r.drain(), "told of the operations already held");
            b.execute(OP, () -> "ok");
            assertThrows(IllegalArgumentException.class, () -> b.execute(OP, () -> {
                throw new IllegalArgumentException("not a failure");
            }));
            assertThrows(IOException.class, () -> b.execute(OP, () -> {
                throw new IOException("down");
            }));
            assertThrows(RuntimeException.class, () -> b.execute(OP, () -> "rejected"));
            clock.advance(Duration.ofSeconds(1));
            b.execute(OP, () -> "trial");
            assertEquals(List.of("added " + OP, "timed " + OP + " SUCCESSFUL x1",
                    "ignored " + OP + " not a failure", "timed " + OP + " IGNORED x1",
                    "timed " + OP + " FAILED x1", "rejected " + OP,
                    "trial " + OP + " SUCCEEDED", "timed " + OP + " SUCCESSFUL x1"),
                    r.drain().stream().filter(l -> !l.startsWith("feed")).toList());
            assertTrue(b.removeObserver(r));
            b.execute(OP, () -> "ok");
            assertEquals(List.of(), r.drain(), "told nothing once removed");
        }
    }

    @Test
    void distributedModeTimesEveryStoreOperationAndFollowsTheFeed() throws Exception {
        InMemoryStore backend = new InMemoryStore();
        Recorder r = new Recorder(CallTiming.NONE);
        try (FeedProbes feed = new FeedProbes(backend);
                CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).failureThreshold(1)
                        .store(backend.newClient()).build()) {
            b.addObserver(r);
            var opened = feed.probe(1, 0);
            assertThrows(IOException.class, () -> b.execute(OP, () -> {
                throw new IOException("down");
            }));
            FeedProbes.await(opened);
            // sorted: the in-process feed may deliver before the write that published returns
            assertEquals(List.of("added " + OP, "feed OPENED", "store apply", "store get", "store subscribe"),
                    r.drain().stream().sorted().toList(), "the subscription, a read, a write, the feed; no call timed");
        } finally {
            backend.close();
        }
    }

    @Test
    void localStateNeverCallsTheStoreAndFollowsTheFeed() throws Exception {
        InMemoryStore backend = new InMemoryStore();
        SpyStore spy = SpyStore.over(backend);
        try (FeedProbes feed = new FeedProbes(backend);
                CircuitBreaker a = CircuitBreaker.builder().clock(clock).ticker(clock).failureThreshold(1)
                        .store(backend.newClient()).build();
                CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).store(spy).build()) {
            b.addObserver(new Recorder(CallTiming.NONE));
            b.execute(OP, () -> "ok");
            assertEquals(BreakerStatus.CLOSED, b.localStatus(OP));
            spy.resetCounts();
            var opened = feed.probe(1, 0);
            assertThrows(IOException.class, () -> a.execute(OP, () -> {
                throw new IOException("down");
            }));
            FeedProbes.await(opened);
            assertEquals(BreakerStatus.OPEN, b.localStatus(OP), "learned from the feed");
            assertTrue(b.localState(OP).map(BreakerState::open).orElse(false));
            assertEquals(0, spy.reads.get() + spy.writes.get(), "no store operation for the local view");
            assertTrue(b.localState("never-used").isEmpty());
        } finally {
            backend.close();
        }
    }

    /**
     * {@code stateChanged} reports this instance's own transitions (calls and operator actions), beside the
     * builder's {@code onStateChange}, never another instance's (those come as {@code feedEvent}).
     */
    @Test
    void stateChangedReportsThisInstancesOwnTransitionsBesideTheListener() throws Exception {
        InMemoryStore backend = new InMemoryStore();
        List<String> own = new CopyOnWriteArrayList<>();
        List<String> listener = new CopyOnWriteArrayList<>();
        List<String> otherOwn = new CopyOnWriteArrayList<>();
        List<String> otherFeed = new CopyOnWriteArrayList<>();
        try (FeedProbes feed = new FeedProbes(backend);
                CircuitBreaker a = CircuitBreaker.builder().clock(clock).ticker(clock).failureThreshold(1)
                        .onStateChange(e -> listener.add(e.from() + ">" + e.to()))
                        .store(backend.newClient()).build();
                CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).store(backend.newClient())
                        .build()) {
            a.addObserver(new CircuitBreakerObserver() {
                @Override
                public void stateChanged(TransitionEvent e) {
                    own.add(e.operation() + " " + e.from() + ">" + e.to());
                }
            });
            b.addObserver(new CircuitBreakerObserver() {
                @Override
                public void stateChanged(TransitionEvent e) {
                    otherOwn.add(e.operation() + " " + e.from() + ">" + e.to());
                }

                @Override
                public void feedEvent(TransitionEvent e) {
                    otherFeed.add(e.operation() + " " + e.from() + ">" + e.to());
                }
            });
            a.execute(OP, () -> "ok");
            var both = feed.probe(2, 0);
            assertThrows(IOException.class, () -> a.execute(OP, () -> {
                throw new IOException("down");
            }));
            a.reset(OP);
            FeedProbes.await(both);
            assertEquals(List.of(OP + " CLOSED>OPEN", OP + " OPEN>CLOSED"), own);
            assertEquals(List.of("CLOSED>OPEN", "OPEN>CLOSED"), listener, "the builder's listener still fires");
            assertEquals(List.of(), otherOwn, "another instance's transitions are not its own");
            assertEquals(List.of(OP + " CLOSED>OPEN", OP + " OPEN>CLOSED"), otherFeed);
        } finally {
            backend.close();
        }
    }

    @Test
    void evictionsAreTold() {
        Recorder r = new Recorder(CallTiming.NONE);
        try (CircuitBreaker b = CircuitBreaker.builder().maxOperations(2).build()) {
            b.addObserver(r);
            for (String op : new String[] {"a", "b", "c"}) {
                b.execute(op, () -> "x");
            }
            List<String> lines = r.drain();
            assertEquals(3, lines.stream().filter(l -> l.startsWith("added")).count());
            assertEquals(1, lines.stream().filter(l -> l.startsWith("evicted")).count(), lines.toString());
        }
    }

    @Test
    void aThrowingObserverNeverReachesTheCall() {
        CircuitBreakerObserver bad = new CircuitBreakerObserver() {
            @Override
            public CallTiming callTiming() {
                return CallTiming.EVERY_CALL;
            }

            @Override
            public void callTimed(ObservedOperation op, CallOutcome outcome, long nanos, long weight) {
                throw new IllegalStateException("observer bug");
            }
        };
        try (LogCapture log = LogCapture.start(); CircuitBreaker b = CircuitBreaker.ofDefaults()) {
            b.addObserver(bad);
            for (int i = 0; i < 3; i++) {
                assertEquals("ok", b.execute(OP, () -> "ok"));
            }
            assertEquals(1, log.warnings("threw in callTimed"), "logged at most every 10 s");
        }
    }

    /**
     * Sampled timing: at most one call per operation per ticker epoch is timed, and the weights of the timed
     * calls add up to the calls they stand for: exactly, once the last call was a timed one.
     */
    @Test
    void samplingTimesAFewCallsWhoseWeightsAddUpToTheCount() throws Exception {
        Recorder r = new Recorder(CallTiming.SAMPLED);
        try (CircuitBreaker b = CircuitBreaker.ofDefaults()) {
            b.addObserver(r);
            assertTrue(TimingTicker.running(), "sampling runs the ticker");
            for (int i = 0; i < 20_000; i++) {
                b.execute(OP, () -> "x");
            }
            int epoch = TimingTicker.epoch;
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (TimingTicker.epoch == epoch && System.nanoTime() < deadline) {
                Thread.sleep(1); // the next epoch, so that the next call is timed
            }
            b.execute(OP, () -> "last");
            long timed = r.drain().stream().filter(l -> l.startsWith("timed")).count();
            assertTrue(timed >= 2 && timed < 20_001 / 2, timed + " of 20,001 calls timed");
            assertEquals(20_001, r.weights.get(), "the weights stand for every call exactly once");
            assertTrue(b.removeObserver(r));
        }
    }

    @Test
    void theTickerStopsWithTheLastSamplingObserver() {
        Recorder r = new Recorder(CallTiming.SAMPLED);
        CircuitBreaker b = CircuitBreaker.ofDefaults();
        b.addObserver(r);
        assertTrue(TimingTicker.running());
        b.close();
        assertTrue(!TimingTicker.running(), "closing the breaker released its sampling observer");
    }
}
