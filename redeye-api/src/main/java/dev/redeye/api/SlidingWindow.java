package dev.redeye.api;

import java.util.Arrays;
import java.util.Objects;

/**
 * The outcomes a sliding-window breaker judges, as stored with its state: immutable, bounded by the policy and
 * never one object per outcome.
 *
 * <ul>
 * <li>A {@link SlidingWindowType#COUNT_BASED count window} of N outcomes is a ring of N one-character slots. Its
 * {@link #position()} is the number of outcomes ever recorded in it; the outcome numbered {@code s} (from 1) is in
 * slot {@code (s - 1) % N}, and the ring holds {@code min(position, N)} slots.</li>
 * <li>A {@link SlidingWindowType#TIME_BASED time window} of N seconds is {@link #bucketCount()} buckets of
 * {@link #bucketSeconds()} seconds each ({@code ceil(N / 120)} seconds, so at most {@value #MAX_BUCKETS}
 * buckets), each counting calls, failures and slow calls. Its {@link #position()} is the number of the newest
 * bucket, {@code floorDiv(now, bucketSeconds * 1000)} of the latest outcome's wall-clock {@code now}. Recording at
 * a later bucket rolls the window, emptying the buckets it passes; an outcome whose {@code now} falls in an
 * earlier bucket than the newest (a caller whose clock is behind) is counted in the newest bucket, so skew moves a
 * bucket edge and never loses a count.</li>
 * </ul>
 *
 * <p>A slow failure counts toward both {@link #failures()} and {@link #slowCalls()}, as in Resilience4j. The
 * position also names the slot (count window) or bucket (time window) of the newest outcome, so that a call
 * recorded as slow while still running can later be marked as failed with {@link #slowCallFailed(long, long)}
 * without being counted twice.
 *
 * <h2>Stored form</h2>
 * {@link #encode()} writes, with characters from {@code [0-9a-z.-]} only:
 * <ul>
 * <li>count: {@code c<N>.<position>.<slots>}, each slot one digit: {@code 0} success, {@code 1} failure,
 * {@code 2} slow success, {@code 3} slow failure, in slot order from slot 0 (for example
 * {@code c5.7.20011}: five slots, seven outcomes so far);</li>
 * <li>time: {@code t<N>.<position>} then, for every bucket from the oldest to the newest, {@code .} and the
 * bucket: empty when it has no calls, else {@code calls}, {@code calls-failures} or
 * {@code calls-failures-slow}, trailing zero counts left out (for example {@code t3.588235294..4-1.2-0-2}).</li>
 * </ul>
 * The form is canonical: {@link #decode(String)} accepts only what {@link #encode()} writes, so two equal windows
 * have one text. Immutable and thread-safe.
 */
public final class SlidingWindow {

    /** The largest count window, in outcomes. */
    public static final int MAX_COUNT_SIZE = 1_000;
    /** The largest time window, in seconds (one day). */
    public static final int MAX_TIME_SECONDS = 86_400;
    /** The most buckets a time window has. */
    public static final int MAX_BUCKETS = 120;

    private static final byte SUCCESS = 0;
    private static final byte FAILURE = 1;
    private static final byte SLOW = 2;

    private final SlidingWindowType type;
    private final int size;
    private final long position;
    /** Count window: one outcome code per slot, {@code min(position, size)} of them. */
    private final byte[] slots;
    /** Time window: calls, failures, slow calls of each bucket, the oldest bucket first. */
    private final int[] buckets;
    private final int calls;
    private final int failures;
    private final int slowCalls;

    private SlidingWindow(SlidingWindowType type, int size, long position, byte[] slots, int[] buckets) {
        this.type = type;
        this.size = size;
        this.position = position;
        this.slots = slots;
        this.buckets = buckets;
        int c = 0;
        int f = 0;
        int s = 0;
        if (type == SlidingWindowType.COUNT_BASED) {
            c = slots.length;
            for (byte b : slots) {
                f += b & FAILURE;
                s += (b & SLOW) >> 1;
            }
        } else {
            for (int i = 0; i < buckets.length; i += 3) {
                c = saturatedAdd(c, buckets[i]);
                f = saturatedAdd(f, buckets[i + 1]);
                s = saturatedAdd(s, buckets[i + 2]);
            }
        }
        this.calls = c;
        this.failures = f;
        this.slowCalls = s;
    }

    /**
     * An empty window of this shape.
     *
     * @param size outcomes (count window, 1 to {@value #MAX_COUNT_SIZE}) or seconds (time window, 1 to
     *             {@value #MAX_TIME_SECONDS})
     * @throws NullPointerException     if {@code type} is null
     * @throws IllegalArgumentException if {@code size} is out of range for the type
     */
    public static SlidingWindow empty(SlidingWindowType type, int size) {
        checkSize(Objects.requireNonNull(type, "type"), size);
        return type == SlidingWindowType.COUNT_BASED
                ? new SlidingWindow(type, size, 0L, new byte[0], null)
                : new SlidingWindow(type, size, 0L, null, new int[3 * bucketCount(size)]);
    }

    /**
     * Checks a window size for a type.
     *
     * @throws IllegalArgumentException if {@code size} is out of range for the type
     */
    public static void checkSize(SlidingWindowType type, int size) {
        boolean count = type == SlidingWindowType.COUNT_BASED;
        int max = count ? MAX_COUNT_SIZE : MAX_TIME_SECONDS;
        if (size < 1 || size > max) {
            throw new IllegalArgumentException("a " + type.wireName() + " window holds at least 1 and at most " + max
                    + (count ? " outcomes" : " seconds") + ", was " + size);
        }
    }

    /** The seconds one bucket of a time window of {@code seconds} spans: {@code ceil(seconds / 120)}. */
    public static int bucketSeconds(int seconds) {
        return (seconds + MAX_BUCKETS - 1) / MAX_BUCKETS;
    }

    private static int bucketCount(int seconds) {
        int width = bucketSeconds(seconds);
        return (seconds + width - 1) / width;
    }

    /** The type. */
    public SlidingWindowType type() {
        return type;
    }

    /** The size: outcomes (count window) or seconds (time window). */
    public int size() {
        return size;
    }

    /** Whether this window has the given type and size (a policy's window), so that it can go on counting. */
    public boolean hasShape(SlidingWindowType t, int s) {
        return type == t && size == s;
    }

    /**
     * The number of outcomes ever recorded (count window), or the number of the newest bucket (time window); 0 for
     * a window that never recorded. It names where the newest outcome is, for {@link #slowCallFailed}.
     */
    public long position() {
        return position;
    }

    /** Seconds per bucket (time window), 0 for a count window. */
    public int bucketSeconds() {
        return type == SlidingWindowType.TIME_BASED ? bucketSeconds(size) : 0;
    }

    /** Buckets (time window), 0 for a count window. */
    public int bucketCount() {
        return type == SlidingWindowType.TIME_BASED ? buckets.length / 3 : 0;
    }

    /** Outcomes in the window (as of its newest bucket, for a time window: see {@link #rolledTo}). */
    public int calls() {
        return calls;
    }

    /** Failed outcomes in the window, slow failures included. */
    public int failures() {
        return failures;
    }

    /** Slow outcomes in the window, slow failures included. */
    public int slowCalls() {
        return slowCalls;
    }

    /** Whether no outcome is in the window. */
    public boolean isEmpty() {
        return calls == 0;
    }

    /**
     * This window as of {@code now}: a time window whose newest bucket is older than {@code now}'s is rolled
     * forward (the buckets it passes are emptied); a count window, or a time window already at or past
     * {@code now}'s bucket, is returned as it is.
     */
    public SlidingWindow rolledTo(long now) {
        if (type == SlidingWindowType.COUNT_BASED || bucketOf(size, now) <= position) {
            return this;
        }
        Counter c = new Counter(this);
        c.rollTo(now);
        return c.snapshot();
    }

    /**
     * This window with one more outcome ({@link Counter#record}).
     *
     * @param failed whether the call failed
     * @param slow   whether the call was slow
     * @param now    the wall-clock epoch ms of the outcome (rolls a time window; ignored by a count window)
     */
    public SlidingWindow record(boolean failed, boolean slow, long now) {
        Counter c = new Counter(this);
        c.record(failed, slow, now);
        return c.snapshot();
    }

    /**
     * This window with the slow call recorded at {@code slot} (the {@link #position()} right after it was
     * recorded) marked as failed ({@link Counter#slowCallFailed}). Returns this window when nothing changes (a time
     * window rolled to {@code now} when only the roll does): a slow call is counted once however it ends.
     *
     * @param slot the position right after the slow call was recorded
     * @param now  the wall-clock epoch ms (rolls a time window first)
     */
    public SlidingWindow slowCallFailed(long slot, long now) {
        Counter c = new Counter(this);
        boolean changed = c.slowCallFailed(slot, now);
        return changed || c.position != position ? c.snapshot() : this;
    }

    private static long bucketOf(int size, long now) {
        return Math.floorDiv(now, bucketSeconds(size) * 1000L);
    }

    /** The stored form (see the class comment). */
    public String encode() {
        StringBuilder sb = new StringBuilder(16 + (slots != null ? slots.length : buckets.length * 2));
        sb.append(type == SlidingWindowType.COUNT_BASED ? 'c' : 't').append(size).append('.').append(position);
        if (type == SlidingWindowType.COUNT_BASED) {
            sb.append('.');
            for (byte b : slots) {
                sb.append((char) ('0' + b));
            }
        } else {
            for (int i = 0; i < buckets.length; i += 3) {
                sb.append('.');
                if (buckets[i] > 0) {
                    sb.append(buckets[i]);
                    if (buckets[i + 1] > 0 || buckets[i + 2] > 0) {
                        sb.append('-').append(buckets[i + 1]);
                    }
                    if (buckets[i + 2] > 0) {
                        sb.append('-').append(buckets[i + 2]);
                    }
                }
            }
        }
        return sb.toString();
    }

    /**
     * Reads the stored form.
     *
     * @throws NullPointerException     if {@code text} is null
     * @throws IllegalArgumentException if {@code text} is not exactly what {@link #encode()} writes for some window
     */
    public static SlidingWindow decode(String text) {
        Objects.requireNonNull(text, "text");
        SlidingWindow w;
        try {
            w = parse(text);
        } catch (RuntimeException e) { // NumberFormatException, index errors of a truncated text
            throw new IllegalArgumentException("malformed sliding window '" + shortened(text) + "': " + e.getMessage(), e);
        }
        if (!w.encode().equals(text)) {
            throw new IllegalArgumentException("malformed sliding window '" + shortened(text) + "': not canonical");
        }
        return w;
    }

    private static SlidingWindow parse(String text) {
        if (text.isEmpty()) {
            throw new IllegalArgumentException("empty");
        }
        SlidingWindowType type = switch (text.charAt(0)) {
            case 'c' -> SlidingWindowType.COUNT_BASED;
            case 't' -> SlidingWindowType.TIME_BASED;
            default -> throw new IllegalArgumentException("unknown type '" + text.charAt(0) + "'");
        };
        String[] parts = text.substring(1).split("\\.", -1);
        int size = Integer.parseInt(parts[0]);
        checkSize(type, size);
        long position = Long.parseLong(parts[1]);
        if (position < 0) {
            throw new IllegalArgumentException("negative position");
        }
        if (type == SlidingWindowType.COUNT_BASED) {
            if (parts.length != 3) {
                throw new IllegalArgumentException("a count window has three parts");
            }
            String ring = parts[2];
            if (ring.length() != Math.min(position, size)) {
                throw new IllegalArgumentException(ring.length() + " slots where " + Math.min(position, size)
                        + " were recorded");
            }
            byte[] s = new byte[ring.length()];
            for (int i = 0; i < s.length; i++) {
                int c = ring.charAt(i) - '0';
                if (c < 0 || c > 3) {
                    throw new IllegalArgumentException("slot " + i + " is not 0 to 3");
                }
                s[i] = (byte) c;
            }
            return new SlidingWindow(type, size, position, s, null);
        }
        int count = bucketCount(size);
        if (parts.length != 2 + count) {
            throw new IllegalArgumentException((parts.length - 2) + " buckets where the size has " + count);
        }
        int[] bk = new int[3 * count];
        for (int i = 0; i < count; i++) {
            String p = parts[2 + i];
            if (p.isEmpty()) {
                continue;
            }
            String[] n = p.split("-", -1);
            if (n.length > 3) {
                throw new IllegalArgumentException("bucket " + i + " has more than three counts");
            }
            for (int j = 0; j < n.length; j++) {
                bk[3 * i + j] = Integer.parseInt(n[j]);
                if (bk[3 * i + j] < 0) {
                    throw new IllegalArgumentException("bucket " + i + " has a negative count");
                }
            }
            if (bk[3 * i + 1] > bk[3 * i] || bk[3 * i + 2] > bk[3 * i]) {
                throw new IllegalArgumentException("bucket " + i + " counts more failures or slow calls than calls");
            }
        }
        return new SlidingWindow(type, size, position, null, bk);
    }

    private static String shortened(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }

    private static int saturatedAdd(int a, int b) {
        int r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Integer.MAX_VALUE : r;
    }

    /**
     * A window updated in place, for a store or an engine that keeps one under its own lock and writes it out with
     * {@link #snapshot()}: the one implementation of the window's arithmetic ({@link SlidingWindow#record} and the
     * other immutable operations run on a copy of it). Each record costs O(1) (a time window's roll also empties
     * the buckets it passes) and allocates nothing. Not thread-safe.
     */
    public static final class Counter {
        private final SlidingWindowType type;
        private final int size;
        private long position;
        /** Count window: one outcome code per slot, {@code size} of them, {@code min(position, size)} in use. */
        private final byte[] ring;
        /** Time window: calls, failures, slow calls of bucket number {@code n} at {@code 3 * (n mod count)}. */
        private final int[] buckets;
        private final int count;
        private final long bucketMillis;
        private int calls;
        private int failures;
        private int slowCalls;

        /** A counter holding {@code w}'s outcomes. */
        public Counter(SlidingWindow w) {
            type = w.type;
            size = w.size;
            position = w.position;
            calls = w.calls;
            failures = w.failures;
            slowCalls = w.slowCalls;
            if (type == SlidingWindowType.COUNT_BASED) {
                ring = new byte[size];
                for (int i = 0; i < w.slots.length; i++) {
                    ring[i] = w.slots[i];
                }
                buckets = null;
                count = 0;
                bucketMillis = 0;
            } else {
                ring = null;
                count = w.buckets.length / 3;
                buckets = new int[w.buckets.length];
                bucketMillis = bucketSeconds(size) * 1000L;
                for (int i = 0; i < count; i++) { // stored oldest first: bucket number position - count + 1 + i
                    int at = index(position - count + 1 + i);
                    buckets[at] = w.buckets[3 * i];
                    buckets[at + 1] = w.buckets[3 * i + 1];
                    buckets[at + 2] = w.buckets[3 * i + 2];
                }
            }
        }

        private int index(long bucket) {
            return 3 * (int) Math.floorMod(bucket, (long) count);
        }

        /** Whether this counter has the given type and size. */
        public boolean hasShape(SlidingWindowType t, int s) {
            return type == t && size == s;
        }

        /** See {@link SlidingWindow#position()}. */
        public long position() {
            return position;
        }

        /** Outcomes in the window, as of its newest bucket. */
        public int calls() {
            return calls;
        }

        /** Failed outcomes in the window. */
        public int failures() {
            return failures;
        }

        /** Slow outcomes in the window. */
        public int slowCalls() {
            return slowCalls;
        }

        /** Empties a time window's buckets older than {@code now}'s window; a count window does not move. */
        public void rollTo(long now) {
            if (type == SlidingWindowType.TIME_BASED) {
                long b = Math.floorDiv(now, bucketMillis);
                if (b > position) {
                    long dropped = Math.min(b - position, count);
                    for (long n = position - count + 1; n < position - count + 1 + dropped; n++) {
                        int at = index(n);
                        calls -= buckets[at];
                        failures -= buckets[at + 1];
                        slowCalls -= buckets[at + 2];
                        buckets[at] = 0;
                        buckets[at + 1] = 0;
                        buckets[at + 2] = 0;
                    }
                    position = b;
                }
            }
        }

        /** Records one outcome; see {@link SlidingWindow} for where it goes. */
        public void record(boolean failed, boolean slow, long now) {
            int f = failed ? 1 : 0;
            int sl = slow ? 1 : 0;
            if (type == SlidingWindowType.COUNT_BASED) {
                if (position == Long.MAX_VALUE) {
                    return; // saturated: nine quintillion outcomes; the window stops moving rather than wrap
                }
                int i = (int) (position % size);
                if (position >= size) { // the slot holds the outcome that leaves the window
                    calls--;
                    failures -= ring[i] & FAILURE;
                    slowCalls -= (ring[i] & SLOW) >> 1;
                }
                ring[i] = (byte) (f | (sl << 1));
                position++;
                calls++;
                failures += f;
                slowCalls += sl;
                return;
            }
            rollTo(now);
            int at = index(position);
            buckets[at] = saturatedAdd(buckets[at], 1);
            buckets[at + 1] = saturatedAdd(buckets[at + 1], f);
            buckets[at + 2] = saturatedAdd(buckets[at + 2], sl);
            calls = saturatedAdd(calls, 1);
            failures = saturatedAdd(failures, f);
            slowCalls = saturatedAdd(slowCalls, sl);
        }

        /**
         * Whether the window would open the breaker under {@code p} once this outcome is recorded (see
         * {@code Transitions.windowTrips}), without recording it.
         */
        public boolean tripsWith(boolean failed, boolean slow, long now, Policy p) {
            int f = failed ? 1 : 0;
            int sl = slow ? 1 : 0;
            int c = calls + 1;
            int fs = failures + f;
            int ss = slowCalls + sl;
            if (type == SlidingWindowType.COUNT_BASED) {
                if (position >= size) {
                    int i = (int) (position % size);
                    c--;
                    fs -= ring[i] & FAILURE;
                    ss -= (ring[i] & SLOW) >> 1;
                }
            } else {
                long b = Math.floorDiv(now, bucketMillis);
                if (b > position) {
                    long dropped = Math.min(b - position, count);
                    for (long n = position - count + 1; n < position - count + 1 + dropped; n++) {
                        int at = index(n);
                        c -= buckets[at];
                        fs -= buckets[at + 1];
                        ss -= buckets[at + 2];
                    }
                }
            }
            return dev.redeye.spi.Transitions.windowTrips(c, fs, ss, p);
        }

        /**
         * Marks the slow call recorded at {@code slot} failed: its slot becomes a slow failure (count window), or its
         * bucket counts one more failure (time window, rolled to {@code now} first). Changes nothing when that slot
         * or bucket has left the window, or when the count window's slot is not a slow success.
         *
         * @return whether a failure was added
         */
        public boolean slowCallFailed(long slot, long now) {
            if (type == SlidingWindowType.COUNT_BASED) {
                if (slot <= position - Math.min(position, size) || slot > position) {
                    return false;
                }
                int i = (int) ((slot - 1) % size);
                if (ring[i] != SLOW) {
                    return false;
                }
                ring[i] = SLOW | FAILURE;
                failures++;
                return true;
            }
            rollTo(now);
            if (slot <= position - count || slot > position) {
                return false;
            }
            int at = index(slot);
            if (buckets[at + 1] >= buckets[at]) {
                return false;
            }
            buckets[at + 1]++;
            failures = saturatedAdd(failures, 1);
            return true;
        }

        /** The window as it is now, immutable. */
        public SlidingWindow snapshot() {
            if (type == SlidingWindowType.COUNT_BASED) {
                return new SlidingWindow(type, size, position, Arrays.copyOf(ring, (int) Math.min(position, size)),
                        null);
            }
            int[] out = new int[buckets.length];
            for (int i = 0; i < count; i++) {
                int at = index(position - count + 1 + i);
                out[3 * i] = buckets[at];
                out[3 * i + 1] = buckets[at + 1];
                out[3 * i + 2] = buckets[at + 2];
            }
            return new SlidingWindow(type, size, position, null, out);
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SlidingWindow)) {
            return false;
        }
        SlidingWindow w = (SlidingWindow) o;
        return type == w.type && size == w.size && position == w.position && Arrays.equals(slots, w.slots)
                && Arrays.equals(buckets, w.buckets);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, size, position) * 31 + Arrays.hashCode(slots) + Arrays.hashCode(buckets);
    }

    /** The stored form. */
    @Override
    public String toString() {
        return encode();
    }
}
