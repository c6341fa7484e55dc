package dev.redeye.tck;

import dev.redeye.spi.Store;

/**
 * What one call of a model rule returned or threw, and when it ran (local {@link System#nanoTime()}), which
 * bounds when the store applied it: the judge of claim expiry and the real-time order of linearizability.
 *
 * @param value      what the call returned ({@code null} for a void method)
 * @param error      what it threw, or {@code null}
 * @param startNanos just before the call
 * @param endNanos   just after it returned or threw
 */
record Observed(Object value, Throwable error, long startNanos, long endNanos) {

    /** Runs {@code call} on {@code store} and records the result or the exception (never thrown). */
    static Observed run(Call call, Store store, String keyName) {
        long start = System.nanoTime();
        try {
            Object v = call.invoke(store, keyName);
            return new Observed(v, null, start, System.nanoTime());
        } catch (RuntimeException | Error e) {
            if (e instanceof VirtualMachineError) {
                throw e;
            }
            return new Observed(null, e, start, System.nanoTime());
        }
    }
}
