package dev.redeye;

/**
 * A call guarded by a {@link CircuitBreaker}: like {@link java.util.function.Supplier}, but it may throw a
 * checked exception of type {@code X}, which {@link CircuitBreaker#execute(String, CheckedSupplier)} rethrows
 * unchanged.
 *
 * @param <T> the result type
 * @param <X> the checked exception the call may throw ({@link RuntimeException} when it throws none)
 */
@FunctionalInterface
public interface CheckedSupplier<T, X extends Exception> {

    /**
     * Runs the call.
     *
     * @return the call's result
     * @throws X the call's own failure
     */
    T get() throws X;
}
