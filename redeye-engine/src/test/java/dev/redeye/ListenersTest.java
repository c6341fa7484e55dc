package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.TransitionFeed;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The builder's event listeners: rejected calls, ignored errors, and fleet-wide transitions seen through the
 * store's feed; a listener that throws is logged and never reaches the call.
 */
class ListenersTest {
    private static final String OP = "shipping";
    private final MutableClock clock = new MutableClock();

    @Test
    void rejectedCallsAreHeardOnEveryPath() throws Exception {
        List<String> heard = new CopyOnWriteArrayList<>();
        try (CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).failureThreshold(1)
                .onCallRejected((op, ex) -> heard.add(op + " " + ((CircuitOpenException) ex).status())).build()) {
            assertThrows(IOException.class, () -> b.execute(OP, () -> {
                throw new IOException("down");
            }));
            assertThrows(CircuitOpenException.class, () -> b.execute(OP, () -> "x"));
            assertEquals("fallback", b.execute(OP, () -> "x", rejected -> "fallback"));
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> b.executeAsync(OP, () -> CompletableFuture.completedFuture("x")).get(5, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof CircuitOpenException);
            assertTrue(!b.tryAcquire(OP).isPermitted());
            assertEquals(List.of(OP + " OPEN", OP + " OPEN", OP + " OPEN", OP + " OPEN"), heard,
                    "execute, execute with a fallback (before it answers), executeAsync, tryAcquire");
        }
    }

    @Test
    void ignoredErrorsAreHeard() {
        List<String> heard = new CopyOnWriteArrayList<>();
        try (CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock)
                .recordFailure(t -> !(t instanceof IllegalArgumentException))
                .onIgnoredError((op, t) -> heard.add(op + " " + t.getClass().getSimpleName())).build()) {
            assertThrows(IllegalArgumentException.class, () -> b.execute(OP, () -> {
                throw new IllegalArgumentException("caller's fault");
            }));
            assertThrows(IllegalStateException.class, () -> b.execute(OP, () -> {
                throw new IllegalStateException("a real failure");
            }));
            assertThrows(InterruptedException.class, () -> b.execute(OP, () -> {
                throw new InterruptedException("deploy");
            }));
            Thread.interrupted(); // the engine restored the interrupt; clear it for the rest of the test
            assertEquals(List.of(OP + " IllegalArgumentException", OP + " InterruptedException"), heard);
            assertEquals(2, b.metrics(OP).ignored());
        }
    }

    @Test
    void aThrowingListenerIsLoggedAndNeverReachesTheCall() {
        try (LogCapture log = LogCapture.start();
                CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).failureThreshold(1)
                        .recordFailure(t -> false)
                        .onCallRejected((op, ex) -> {
                            throw new IllegalStateException("listener bug");
                        })
                        .onIgnoredError((op, t) -> {
                            throw new IllegalStateException("listener bug");
                        }).build()) {
            IOException own = new IOException("ignored");
            assertEquals(own, assertThrows(IOException.class, () -> b.execute(OP, () -> {
                throw own;
            })), "the call's own exception, not the listener's");
            b.forceOpen(OP);
            assertThrows(CircuitOpenException.class, () -> b.execute(OP, () -> "x"), "the rejection, not the bug");
            assertEquals(1, log.warnings("threw in"), "logged, at most every 10 s");
        }
    }

    /**
     * Another instance's transition arrives through the feed: B hears A open and close the breaker, without
     * making a call and without reaching into {@code store.capability(TransitionFeed.class)}.
     */
    @Test
    void fleetTransitionsAreHeardFromTheFeed() throws Exception {
        InMemoryStore backend = new InMemoryStore();
        List<TransitionEvent> heardByB = new CopyOnWriteArrayList<>();
        CountDownLatch two = new CountDownLatch(2);
        try (CircuitBreaker a = CircuitBreaker.builder().clock(clock).ticker(clock).failureThreshold(1)
                .store(backend.newClient()).build();
                CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).store(backend.newClient())
                        .onFleetStateChange(e -> {
                            heardByB.add(e);
                            two.countDown();
                        }).build()) {
            assertThrows(IOException.class, () -> a.execute(OP, () -> {
                throw new IOException("down");
            }));
            a.reset(OP);
            FeedProbes.await(two);
            assertEquals(List.of(TransitionKind.OPENED, TransitionKind.FORCED_CLOSED),
                    heardByB.stream().map(TransitionEvent::kind).toList());
            assertEquals(BreakerStatus.OPEN, heardByB.get(0).to());
            assertEquals(OP, heardByB.get(0).operation());
            assertEquals(0, b.metrics(OP).calls(), "B made no call");
        } finally {
            backend.close();
        }
    }

    @Test
    void inLocalModeTheBreakersOwnTransitionsAreTheFleets() throws Exception {
        List<TransitionKind> heard = new CopyOnWriteArrayList<>();
        CountDownLatch one = new CountDownLatch(1);
        try (CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).failureThreshold(1)
                .onFleetStateChange(e -> {
                    heard.add(e.kind());
                    one.countDown();
                }).build()) {
            assertThrows(IOException.class, () -> b.execute(OP, () -> {
                throw new IOException("down");
            }));
            FeedProbes.await(one);
            assertEquals(List.of(TransitionKind.OPENED), heard);
        }
    }

    @Test
    void aStoreWithoutAFeedSaysSoOnce() {
        InMemoryStore backend = new InMemoryStore();
        try (LogCapture log = LogCapture.start();
                CircuitBreaker b = CircuitBreaker.builder().store(SpyStore.over(backend, TransitionFeed.class))
                        .onFleetStateChange(e -> { }).build()) {
            assertEquals(1, log.warnings("onFleetStateChange is set but store"));
            b.execute(OP, () -> "ok");
        } finally {
            backend.close();
        }
    }

    @Test
    void listenersMustNotBeNull() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CircuitBreaker.builder().onFleetStateChange(null).build());
        assertTrue(e.getMessage().contains("onFleetStateChange"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CircuitBreaker.builder().onCallRejected(null).build());
        assertThrows(IllegalArgumentException.class, () -> CircuitBreaker.builder().onIgnoredError(null).build());
    }
}
