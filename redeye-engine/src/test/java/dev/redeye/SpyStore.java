package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * A decorator over a real store (an {@link InMemoryStore} client standing for one process) that counts reads
 * and writes, can hide capabilities, can be switched to throw {@link StoreException} on every method, and can
 * hold one read in flight until the test releases it ({@link #holdNextRead()}).
 */
class SpyStore extends ForwardingStore {
    final Store delegate;
    private final Set<Class<?>> hidden;
    final AtomicInteger reads = new AtomicInteger();
    final AtomicInteger writes = new AtomicInteger();
    final AtomicInteger claims = new AtomicInteger();
    final AtomicInteger releases = new AtomicInteger();
    final AtomicInteger closes = new AtomicInteger();
    final AtomicInteger liveSubscriptions = new AtomicInteger();
    volatile boolean failing;
    volatile boolean failClaims;
    volatile boolean failWrites;
    /** Reads that were held by {@link #holdNextRead()} (counted when the hold starts). */
    final AtomicInteger heldReads = new AtomicInteger();
    private final AtomicReference<CountDownLatch> holdNext = new AtomicReference<>();

    SpyStore(Store delegate, Class<?>... hidden) {
        super(delegate);
        this.delegate = delegate;
        this.hidden = Set.of(hidden);
    }

    /** Shares {@code backend} with every other client made from it. */
    static SpyStore over(InMemoryStore backend, Class<?>... hidden) {
        return new SpyStore(backend.newClient(), hidden);
    }

    void resetCounts() {
        reads.set(0);
        writes.set(0);
        claims.set(0);
        releases.set(0);
    }

    private void check() {
        if (failing) {
            throw new StoreException("backend down (test)");
        }
    }

    private void checkWrite() {
        check();
        if (failWrites) {
            throw new StoreException("write failed (test)");
        }
    }

    @Override
    protected boolean offers(Class<?> type) {
        return !hidden.contains(type) && super.offers(type);
    }

    /**
     * The next {@code get} (only that one) blocks, ignoring interrupts, until the returned latch is counted
     * down (at most 30 s); then it answers as usual, or throws if {@link #failing} was set meanwhile.
     */
    CountDownLatch holdNextRead() {
        CountDownLatch release = new CountDownLatch(1);
        holdNext.set(release);
        return release;
    }

    private static void awaitIgnoringInterrupts(CountDownLatch latch) {
        boolean interrupted = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                latch.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public Optional<BreakerState> get(String key) {
        reads.incrementAndGet();
        CountDownLatch hold = holdNext.getAndSet(null);
        if (hold != null) {
            heldReads.incrementAndGet();
            awaitIgnoringInterrupts(hold);
        }
        check();
        return super.get(key);
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        writes.incrementAndGet();
        checkWrite();
        super.put(key, state, ttl);
    }

    @Override
    public void delete(String key) {
        writes.incrementAndGet();
        checkWrite();
        super.delete(key);
    }

    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        writes.incrementAndGet();
        checkWrite();
        return super.apply(key, operation, policy, now);
    }

    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        claims.incrementAndGet();
        check();
        if (failClaims) {
            throw new StoreException("claims down (test)");
        }
        return super.claimTrial(key, permits, ttl);
    }

    @Override
    public void releaseTrial(String key, String token) {
        releases.incrementAndGet();
        check();
        super.releaseTrial(key, token);
    }

    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        check();
        Subscription sub = super.subscribe(listener, onGap);
        liveSubscriptions.incrementAndGet();
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        return () -> {
            if (done.compareAndSet(false, true)) {
                liveSubscriptions.decrementAndGet();
            }
            sub.close();
        };
    }

    @Override
    public void close() {
        closes.incrementAndGet();
        delegate.close();
    }
}
