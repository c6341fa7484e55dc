package dev.redeye;

import static dev.redeye.LocalModeTest.failOnce;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@code followFeed(true)} subscribes a breaker to the store's feed with no local cache, listener or observer, so
 * a reset by another instance ends its rejections at once; without it the breaker serves its open view until the
 * open-cache refresh (which the virtual clock here never reaches).
 */
class FollowFeedTest extends BreakersOverInMemoryStore {
    private static final String OP = "inventory";

    private CircuitBreaker build(boolean follow) {
        CircuitBreaker b = CircuitBreaker.builder().clock(clock).failureThreshold(1).store(backend.newClient())
                .openCacheRefresh(Duration.ofHours(1)).followFeed(follow).build();
        breakers.add(b);
        return b;
    }

    /** What {@code b} answers for a call, polled until {@code expected} or 5 s of real time. */
    private static String callUntil(CircuitBreaker b, String expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        String r;
        do {
            r = b.executeOrElse(OP, () -> "ran", "rejected");
            if (r.equals(expected)) {
                return r;
            }
            Thread.sleep(10);
        } while (System.nanoTime() < deadline);
        return r;
    }

    @Test
    void aFollowingBreakerSeesAnotherInstancesResetAtOnce() throws Exception {
        CircuitBreaker a = build(false);
        CircuitBreaker following = build(true);
        CircuitBreaker notFollowing = build(false);
        failOnce(a, OP);
        assertEquals("rejected", following.executeOrElse(OP, () -> "ran", "rejected"));
        assertEquals("rejected", notFollowing.executeOrElse(OP, () -> "ran", "rejected"));
        a.reset(OP);
        assertEquals("ran", callUntil(following, "ran"), "the feed's CLOSED event ended the open view");
        assertEquals("rejected", notFollowing.executeOrElse(OP, () -> "ran", "rejected"),
                "without the feed the open view serves until the refresh");
        assertEquals(true, following.config().followFeed());
    }
}
