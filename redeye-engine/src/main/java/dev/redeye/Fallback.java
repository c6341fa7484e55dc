package dev.redeye;

/**
 * A breaker-wide fallback, configured with {@link CircuitBreakerBuilder#fallback(Fallback)}: it produces a
 * result for a call the breaker <b>rejected</b> ({@link dev.redeye.api.CircuitOpenException} or
 * {@link dev.redeye.api.StoreUnavailableException}). It is never used for a call that ran and failed: the
 * call's own exception is always rethrown unchanged.
 *
 * <p>The returned object is cast to the caller's result type unchecked, so a fallback shared by operations
 * of different result types must return something each call site accepts (often {@code null}). A checked
 * exception thrown by the fallback reaches the caller wrapped in
 * {@link java.lang.reflect.UndeclaredThrowableException}; an unchecked one is rethrown as is.
 */
@FunctionalInterface
public interface Fallback {

    /**
     * Produces the result of a rejected call.
     *
     * @param operation the rejected operation
     * @param rejection why it was rejected
     * @return the value the rejected call returns instead
     * @throws Exception to fail the call with another exception (rethrow {@code rejection} to keep it)
     */
    Object apply(String operation, RuntimeException rejection) throws Exception;
}
