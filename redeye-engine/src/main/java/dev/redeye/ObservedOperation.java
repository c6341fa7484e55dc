package dev.redeye;

/**
 * One operation of a {@link CircuitBreaker} as a {@link CircuitBreakerObserver} sees it: its name and this
 * instance's counters. The object stands for the operation from the moment the breaker starts holding it
 * until it is evicted ({@link CircuitBreakerObserver#operationEvicted}); an operation used again after its
 * eviction is a new object. Compare by identity.
 *
 * <p>Reading it never calls the store. Thread-safe.
 */
public interface ObservedOperation {

    /** The operation name, as the callers wrote it. */
    String name();

    /**
     * A snapshot of this instance's counters for the operation; allocates one small record, takes no lock. An
     * evicted operation's counters stop moving but stay readable.
     */
    Metrics metrics();
}
