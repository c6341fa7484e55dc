package dev.redeye.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.opentest4j.TestAbortedException;

/**
 * Test support for concurrency tests of a store: threads started first and released together by a latch, so
 * that they really race, then joined with a deadline. The TCK's races use it, and so can a store's own
 * tests (exact counts under contention, claim races).
 */
public final class Race {
    private Race() {
    }

    /** The body of racing thread {@code thread} (0-based). */
    @FunctionalInterface
    public interface Body {
        void run(int thread) throws Exception;
    }

    /**
     * Runs {@code threads} threads of {@code body} to the end.
     *
     * @throws AssertionError           with the first exception a thread threw (the others suppressed), or if
     *                                  a thread is still running after {@code timeout}
     * @throws TestAbortedException     if the first failure was an assumption (a capability the store lacks)
     * @throws IllegalArgumentException if {@code threads < 1}
     * @throws InterruptedException     if the calling thread is interrupted while waiting
     */
    public static void run(int threads, Duration timeout, Body body) throws InterruptedException {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, was " + threads);
        }
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(body, "body");
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            int n = i;
            Thread t = new Thread(() -> {
                ready.countDown();
                try {
                    go.await();
                    body.run(n);
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "tck-race-" + i);
            t.setDaemon(true);
            all.add(t);
            t.start();
        }
        ready.await(30, TimeUnit.SECONDS);
        go.countDown();
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Thread t : all) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (t.isAlive()) {
                throw new AssertionError("a racing thread is still running after " + timeout.toMillis()
                        + " ms (a store call hangs?)");
            }
        }
        if (!errors.isEmpty()) {
            Throwable first = errors.get(0);
            if (first instanceof TestAbortedException) {
                throw (TestAbortedException) first; // a capability assumption inside a racing thread
            }
            AssertionError e = new AssertionError("a racing thread failed: " + first, first);
            errors.stream().skip(1).forEach(e::addSuppressed);
            throw e;
        }
    }
}
