package dev.redeye.store.hazelcast;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Threads released together by a latch, so that they really race. */
final class Race {
    private Race() {
    }

    /** The body of thread {@code i}. */
    @FunctionalInterface
    interface Body {
        void run(int thread) throws Exception;
    }

    /**
     * Runs {@code threads} threads to the end and fails with the first exception one threw (the others
     * suppressed), or if one is still running after {@code timeoutSeconds}.
     */
    static void run(int threads, long timeoutSeconds, Body body) throws InterruptedException {
        CountDownLatch go = new CountDownLatch(1);
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            int n = i;
            Thread t = new Thread(() -> {
                try {
                    go.await();
                    body.run(n);
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "race-" + i);
            t.setDaemon(true);
            all.add(t);
            t.start();
        }
        go.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        for (Thread t : all) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (t.isAlive()) {
                throw new AssertionError("a racing thread is still running after " + timeoutSeconds + " s");
            }
        }
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError("a racing thread failed: " + errors.get(0), errors.get(0));
            errors.stream().skip(1).forEach(e::addSuppressed);
            throw e;
        }
    }
}
