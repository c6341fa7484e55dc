package dev.redeye.store.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.store.postgres.PollPosition.Verdict;
import org.junit.jupiter.api.Test;

/** The polled feed's position: ids committed out of order are delivered once, late ones within the grace. */
class PollPositionTest {
    private static final long GRACE = 1_000;

    @Test
    void anIdCommittedAfterAHigherOneIsDeliveredOnceWhenItAppears() {
        PollPosition p = new PollPosition(10, GRACE, 100);
        assertEquals(Verdict.DELIVER, p.read(12, 0)); // 11 is not visible yet
        assertArrayEquals(new Long[] {11L}, p.holeIds());
        assertFalse(p.expire(GRACE - 1), "within the grace: no gap");
        assertEquals(Verdict.DELIVER, p.read(11, GRACE - 1), "11 appears: delivered late");
        assertEquals(Verdict.SEEN, p.read(11, GRACE - 1), "and only once");
        assertEquals(Verdict.SEEN, p.read(12, GRACE - 1));
        assertEquals(12, p.last());
        assertFalse(p.expire(10 * GRACE));
    }

    @Test
    void anIdThatNeverAppearsIsAGapAfterTheGrace() {
        PollPosition p = new PollPosition(0, GRACE, 100);
        p.read(1, 0);
        p.read(3, 0);
        assertFalse(p.expire(GRACE - 1));
        assertTrue(p.expire(GRACE), "2 was rolled back, or is too late: subscribers must re-read");
        assertEquals(0, p.holes());
        assertFalse(p.expire(2 * GRACE), "one gap for it");
    }

    @Test
    void aJumpOverMoreIdsThanItWaitsForIsAGapAtOnce() {
        PollPosition p = new PollPosition(5, GRACE, 100);
        p.read(500, 0);
        assertEquals(0, p.holes());
        assertTrue(p.expire(0));
    }

    @Test
    void theHolesOfTheStartAreGivenUpOnQuietly() {
        PollPosition p = new PollPosition(10, GRACE, 100);
        p.missing(9, 0);
        p.missing(11, 0); // above last: not a hole
        assertArrayEquals(new Long[] {9L}, p.holeIds());
        assertFalse(p.expire(GRACE), "9 may predate every subscriber: no gap");
        assertEquals(0, p.holes());
        p.missing(8, 0);
        assertEquals(Verdict.DELIVER, p.read(8, 1), "a start hole that appears is delivered");
    }
}
