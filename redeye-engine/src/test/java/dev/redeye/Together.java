package dev.redeye;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Starts callers on a pool at once and waits, at most 60 s for each, until every one has ended. */
final class Together {
    private Together() {
    }

    /** What caller {@code index} does once every caller was submitted. */
    interface Caller {
        void call(int index) throws Exception;
    }

    /** Runs {@code callers} callers on {@code pool}; rethrows, wrapped, what a caller threw. */
    static void run(ExecutorService pool, int callers, Caller caller) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < callers; t++) {
            int index = t;
            futures.add(pool.submit(() -> {
                start.await();
                caller.call(index);
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
    }
}
