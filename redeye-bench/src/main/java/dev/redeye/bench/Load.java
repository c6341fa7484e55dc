package dev.redeye.bench;

import dev.redeye.CheckedSupplier;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.LongAdder;

/** Small helpers shared by the distributed benchmarks: load loops and the dependency's canned calls. */
final class Load {
    /** The failure of a dead dependency: preallocated, no stack trace, so failing costs nothing to build. */
    static final DependencyDown DOWN = new DependencyDown();
    /** What a healthy dependency returns. */
    static final Object OK = new Object();
    /** A call that succeeds at once. */
    static final CheckedSupplier<Object, RuntimeException> HEALTHY = () -> OK;
    /** A call that fails at once. */
    static final CheckedSupplier<Object, RuntimeException> FAILING = () -> {
        throw DOWN;
    };

    private Load() {
    }

    /** The exception a dead dependency throws. */
    static final class DependencyDown extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DependencyDown() {
            super("dependency down", null, false, false);
        }
    }

    /**
     * Runs {@code body} in a loop on {@code threads} threads for {@code millis} of real time, all threads
     * starting together.
     *
     * @return the number of times {@code body} ran, over all threads
     * @throws IllegalStateException if a thread was interrupted or {@code body} threw
     */
    static long forMillis(int threads, long millis, Runnable body) {
        LongAdder count = new LongAdder();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        List<Throwable> errors = new ArrayList<>();
        long[] deadline = new long[1];
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    long n = 0;
                    long end = deadline[0];
                    while (System.nanoTime() < end) {
                        body.run();
                        n++;
                    }
                    count.add(n);
                } catch (Throwable e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                }
            }, "load-" + i);
            workers.add(t);
            t.start();
        }
        deadline[0] = System.nanoTime() + millis * 1_000_000L;
        start.countDown();
        joinAll(workers);
        if (!errors.isEmpty()) {
            throw new IllegalStateException("a load thread failed", errors.get(0));
        }
        return count.sum();
    }

    /**
     * Waits for every thread to end.
     *
     * @throws IllegalStateException if interrupted
     */
    static void joinAll(List<Thread> threads) {
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /**
     * Sleeps {@code millis}.
     *
     * @throws IllegalStateException if interrupted (the interrupt is kept)
     */
    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
