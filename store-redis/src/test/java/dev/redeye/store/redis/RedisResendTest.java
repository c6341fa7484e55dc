package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.testsupport.RedisProcess;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.tck.TcpRelay;
import redis.clients.jedis.JedisPooled;

/**
 * What the store sends a second time after a broken connection, through a TCP relay that lets a command reach
 * the server and drops the connection instead of its reply (the server ran it; the client sees the connection
 * end): while the reply is held, another instance writes the key, then the connection is dropped. A write
 * re-sent then would undo the other instance's acknowledged write: a re-sent {@code delete} erases the life
 * it began, a re-sent {@code put} erases the failure it counted. So neither is re-sent: the caller gets a
 * {@link StoreException} (the write may have run) and the other instance's write stands.
 */
class RedisResendTest {
    private RedisProcess server;
    private DropOneReply observer;
    private TcpRelay relay;
    private JedisPooled viaRelay;
    private JedisPooled direct;
    private RedisStore a;
    private RedisStore b;

    /** Lets the next command through, holds its reply until released, then drops the connection instead. */
    private static final class DropOneReply implements TcpRelay.Observer {
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        volatile boolean armed;
        volatile int connection = -1;

        @Override
        public void beforeForward(int conn, boolean fromClient, int bytes) throws InterruptedException {
            if (!armed) {
                return;
            }
            if (fromClient && connection < 0) {
                connection = conn; // the command: forwarded, so the server runs it
            } else if (!fromClient && conn == connection) {
                armed = false;
                held.countDown();
                release.await(10, TimeUnit.SECONDS);
                throw new InterruptedException("drop the connection instead of the reply");
            }
        }
    }

    @BeforeEach
    void start() {
        server = RedisProcess.start();
        observer = new DropOneReply();
        relay = new TcpRelay("127.0.0.1", server.port(), observer);
        viaRelay = new JedisPooled("127.0.0.1", relay.port());
        direct = new JedisPooled("127.0.0.1", server.port());
        a = RedisStore.builder(viaRelay).prefix("resend:").build();
        b = RedisStore.builder(direct).prefix("resend:").build();
    }

    @AfterEach
    void stop() {
        a.close();
        b.close();
        viaRelay.close();
        direct.close();
        relay.close();
        server.close();
    }

    /**
     * Runs {@code write} on store A with its reply dropped; while the reply is held, {@code meanwhile} runs on
     * store B. Returns A's outcome.
     */
    private Throwable writeWithLostReply(Consumer<RedisStore> write, Consumer<RedisStore> meanwhile) throws Exception {
        // a pooled connection through the relay, so the write below needs no new one, and put's script loaded
        a.put("warm", BreakerState.INITIAL, Duration.ofMinutes(1));
        observer.armed = true;
        CompletableFuture<Void> f = CompletableFuture.runAsync(() -> write.accept(a));
        assertTrue(observer.held.await(10, TimeUnit.SECONDS), "the write reached the server");
        meanwhile.accept(b);
        observer.release.countDown();
        try {
            f.get(10, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    @Test
    void aDeleteWhoseReplyWasLostIsNotResentOverALifeAnotherInstanceBegan() throws Exception {
        Policy p = Policy.builder().failureThreshold(5).build();
        b.apply("op", AtomicOperation.failure(), p, 1);
        Throwable outcome = writeWithLostReply(s -> s.delete("op"), s -> s.apply("op", AtomicOperation.failure(), p, 2));
        BreakerState kept = b.get("op").orElseThrow(() -> new AssertionError(
                "the failure B counted after A's delete ran was erased by a re-sent delete"));
        assertEquals(1, kept.failures(), "B's new life, begun after the delete ran");
        assertTrue(outcome instanceof StoreException, "the caller learns the delete's outcome is unknown: " + outcome);
    }

    @Test
    void aPutWhoseReplyWasLostIsNotResentOverAFailureAnotherInstanceCounted() throws Exception {
        Policy p = Policy.builder().failureThreshold(100).build();
        BreakerState five = BreakerState.INITIAL.toBuilder().failures(5).version(7).build();
        Throwable outcome = writeWithLostReply(s -> s.put("op", five, Duration.ofMinutes(1)),
                s -> assertEquals(6, s.apply("op", AtomicOperation.failure(), p, 2).state().failures()));
        assertEquals(6, b.get("op").orElseThrow().failures(),
                "the failure B counted on top of A's put was erased by a re-sent put");
        assertTrue(outcome instanceof StoreException, "the caller learns the put's outcome is unknown: " + outcome);
    }

    @Test
    void aReadWhoseReplyWasLostIsResentAndSucceeds() throws Exception {
        b.put("op", BreakerState.INITIAL.toBuilder().failures(3).build(), Duration.ofMinutes(1));
        BreakerState[] read = new BreakerState[1];
        Throwable outcome = writeWithLostReply(s -> read[0] = s.get("op").orElseThrow(), s -> { });
        assertEquals(null, outcome, "a read is harmless twice: re-sent once on a fresh connection");
        assertEquals(3, read[0].failures());
    }
}
