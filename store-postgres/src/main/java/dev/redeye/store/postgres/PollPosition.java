package dev.redeye.store.postgres;

import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Where a polled feed stands in the events table: the highest id it has read, and the ids below it that it has
 * not seen yet (holes), each with the time it was first missed.
 *
 * <p>Why holes: an event's id is drawn from a sequence when its transaction inserts it, and transactions commit
 * in their own order, so a reader can see id 11 before id 10 commits. Remembering only the highest id would skip
 * 10 forever. A hole is asked for again by every poll (by id, besides the ids after the highest) until it appears (it is delivered then) or has been missing for
 * {@code holeGraceNanos} (a transition rolled back at commit, or a commit so slow that it is given up on): then
 * the feed signals a gap, so that subscribers re-read. Events of one key never overtake each other (the second
 * waits for the first's row lock, which is released only once the first is visible), so delivering a hole late
 * keeps each key's events in version order.
 *
 * <p>Bounded: at most {@code maxHoles} holes; a jump over more ids than that (a reader that fell behind the
 * clean-up of old events) is a gap at once. Used by one thread at a time (the feed's, after the subscribing
 * thread that made it started that thread).
 */
final class PollPosition {
    /** What a poll does with one row it read. */
    enum Verdict {
        /** A new event (or a hole filled): deliver it. */
        DELIVER,
        /** Read before: skip it. */
        SEEN
    }

    private final long holeGraceNanos;
    private final int maxHoles;
    private final TreeMap<Long, Long> holes = new TreeMap<>();
    /** Holes of the feed's start: given up on without a gap, since they may predate every subscriber. */
    private final Set<Long> quiet = new HashSet<>();
    private long last;
    private boolean gap;

    /**
     * @param last           the highest id already accounted for
     * @param holeGraceNanos how long an id missing below {@code last} is waited for
     * @param maxHoles       the most holes kept
     */
    PollPosition(long last, long holeGraceNanos, int maxHoles) {
        this.last = last;
        this.holeGraceNanos = holeGraceNanos;
        this.maxHoles = maxHoles;
    }

    /** The highest id read: the next poll reads the ids after it, and the holes. */
    long last() {
        return last;
    }

    /** The ids of the holes, for the next poll to read again. */
    Long[] holeIds() {
        return holes.keySet().toArray(new Long[0]);
    }

    int holes() {
        return holes.size();
    }

    /**
     * Marks an id up to {@code last} that a feed did not see when it started as a quiet hole: a transaction in
     * flight while the feed read the highest id (delivered if it appears within the grace), or one that ended
     * long ago (given up on without a gap).
     */
    void missing(long id, long nowNanos) {
        if (id <= last && holes.size() < maxHoles) {
            holes.put(id, nowNanos);
            quiet.add(id);
        }
    }

    /** Accounts for one row a poll returned (rows come in increasing id order). */
    Verdict read(long id, long nowNanos) {
        if (id <= last) {
            quiet.remove(id);
            return holes.remove(id) != null ? Verdict.DELIVER : Verdict.SEEN;
        }
        long skipped = id - last - 1;
        if (skipped > 0) {
            if (skipped > maxHoles - holes.size()) {
                gap = true; // too many ids at once to wait for: say so, and wait for none of them
            } else {
                for (long h = last + 1; h < id; h++) {
                    holes.put(h, nowNanos);
                }
            }
        }
        last = id;
        return Verdict.DELIVER;
    }

    /**
     * Gives up on the holes missing for longer than the grace, and tells whether subscribers must be told of a
     * gap (holes given up on, or ids jumped over since the last call). Called after each poll.
     */
    boolean expire(long nowNanos) {
        for (Iterator<Map.Entry<Long, Long>> it = holes.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Long, Long> hole = it.next();
            if (nowNanos - hole.getValue() >= holeGraceNanos) {
                it.remove();
                gap |= !quiet.remove(hole.getKey());
            }
        }
        boolean g = gap;
        gap = false;
        return g;
    }
}
