package dev.redeye;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreUnavailableException;
import dev.redeye.spi.Store;
import dev.redeye.spi.Transitions;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A circuit breaker whose state lives in a {@link Store}: in process memory by default (local mode), or in a
 * shared store (distributed mode), so that one instance seeing a dependency fail trips the breaker for the
 * whole fleet. One breaker guards any number of operations, each named by a string and with its own state.
 *
 * <pre>{@code
 * CircuitBreaker breaker = CircuitBreaker.builder()
 *     .failureThreshold(5)
 *     .resetTimeout(Duration.ofSeconds(60))
 *     .store(Stores.open("redis://127.0.0.1:6379?prefix=myapp:"))   // omit for local mode
 *     .build();
 * Receipt r = breaker.execute("payment-gateway", () -> gateway.charge(order));
 * }</pre>
 *
 * <p>Code that runs the call itself (a reactive pipeline, an interceptor) asks for a {@link Permit} with
 * {@link #tryAcquire(String)} instead; decorators ({@link #decorateSupplier}, {@link #decorateCallable},
 * {@link #decorateRunnable}, {@link #decorateCompletionStage}) bind an operation once. Metrics and events come
 * from {@link CircuitBreakerObserver}s ({@link #addObserver}; {@code redeye-micrometer} is one) and the
 * builder's listeners; {@link #localStatus(String)} answers without calling the store.
 *
 * <p>What a call costs, which outcomes count ({@link CircuitBreakerBuilder#recordFailure(Predicate)}; a call's
 * own exception is always rethrown unchanged), how store errors are handled (under the
 * {@link StoreErrorPolicy}, never as if the call had failed), the two kinds of time and how operations are
 * named and evicted are said once, in the {@linkplain dev.redeye package documentation}.
 *
 * <p>Every method throws {@link NullPointerException} for a null argument; one that takes an operation name
 * checks it ({@link OperationNames#requireValid}: an {@link IllegalArgumentException}, never a store error),
 * except {@code localState}, {@code localStatus}, {@code holds} and {@code metrics}, which never create one.
 * Thread-safe; no lock is held while a user's call runs. A closed breaker ({@link #close()}) throws
 * {@link IllegalStateException} from every method that calls the store, runs a call or adds an observer; a
 * call already admitted finishes normally, its outcome write failing quietly.
 */
public final class CircuitBreaker implements AutoCloseable {
    private final BreakerParts parts;
    private final Operations operations;
    private final Calls calls;
    private final ManualControl manual;

    CircuitBreaker(CircuitBreakerConfig config, long seed) {
        this.parts = new BreakerParts(config, seed);
        this.operations = parts.operations;
        this.calls = parts.calls;
        this.manual = new ManualControl(parts);
    }

    /** A builder with the reference defaults (local mode unless a store is set). */
    public static CircuitBreakerBuilder builder() {
        return new CircuitBreakerBuilder();
    }

    /** A local-mode breaker with the reference defaults; cheap, no threads. */
    public static CircuitBreaker ofDefaults() {
        return builder().build();
    }

    /**
     * Runs {@code call} if the breaker for {@code operation} allows it, records the outcome, and returns the
     * call's result or rethrows its exception unchanged.
     *
     * <p>With a {@code callTimeout}, the calling thread is interrupted at the deadline and the call counts as a
     * timeout failure (see {@link CircuitBreakerBuilder#callTimeout(Duration)}); the engine clears its own
     * interrupt from the thread before returning.
     *
     * @param operation the operation name; each name has its own breaker state
     * @param call      the call to guard
     * @return the call's result, or the configured fallback's result for a rejected call
     * @throws X                          the call's own exception, unchanged
     * @throws CircuitOpenException       if the breaker is open (or half-open with every trial permit taken)
     *                                    and no fallback is configured
     * @throws StoreUnavailableException  under {@link StoreErrorPolicy#REJECT} when the store could not be
     *                                    read or a trial could not be claimed, and no fallback is configured
     */
    public <T, X extends Exception> T execute(String operation, CheckedSupplier<T, X> call) throws X {
        return run(operation, call, null);
    }

    /**
     * Like {@link #execute(String, CheckedSupplier)}, but a rejected call ({@link CircuitOpenException} or
     * {@link StoreUnavailableException}) answers with {@code fallback}, which takes precedence over the
     * breaker-wide fallback. The fallback is never used for a call that ran and failed. The rejection it is
     * given is built for it (an exception without a stack trace, by default); a fallback that does not look
     * at it is cheaper as {@link #executeOrElse(String, CheckedSupplier, Object)} or
     * {@link #executeOrElseGet(String, CheckedSupplier, Supplier)}, which build none.
     */
    public <T, X extends Exception> T execute(String operation, CheckedSupplier<T, X> call,
            Function<? super RuntimeException, ? extends T> fallback) throws X {
        Objects.requireNonNull(fallback, "fallback");
        return run(operation, call, fallback);
    }

    /**
     * Like {@link #execute(String, CheckedSupplier)}, but a rejected call returns {@code orElse} instead (over
     * the breaker-wide fallback), and <b>no exception is built</b> for it: the rejection allocates nothing
     * (unless an observer or {@code onCallRejected} is told of it; a {@link StoreUnavailableException}, which
     * carries the store's error, is always built). A call that ran and failed still rethrows its own exception.
     *
     * <pre>{@code
     * Quote q = breaker.executeOrElse("pricing", () -> pricing.quote(item), Quote.UNAVAILABLE);
     * }</pre>
     *
     * @param orElse the result of a rejected call (may be null)
     * @return the call's result, or {@code orElse} if the breaker rejected it
     * @throws X                        the call's own exception, unchanged
     */
    public <T, X extends Exception> T executeOrElse(String operation, CheckedSupplier<T, X> call, T orElse)
            throws X {
        Objects.requireNonNull(call, "call");
        return calls.runOrElse(parts.entry(operation), call, orElse, null);
    }

    /**
     * Like {@link #executeOrElse(String, CheckedSupplier, Object)}, with the result of a rejected call made by
     * {@code orElse} (on the caller's thread, only for a rejected call); an exception it throws reaches the
     * caller as is. A fallback that needs the rejection ({@code retryAfter()}) is
     * {@link #execute(String, CheckedSupplier, Function)}'s.
     *
     * @param orElse makes the result of a rejected call (its result may be null)
     * @return the call's result, or {@code orElse.get()} if the breaker rejected it
     * @throws X                        the call's own exception, unchanged
     */
    public <T, X extends Exception> T executeOrElseGet(String operation, CheckedSupplier<T, X> call,
            Supplier<? extends T> orElse) throws X {
        Objects.requireNonNull(call, "call");
        Objects.requireNonNull(orElse, "orElse");
        return calls.runOrElse(parts.entry(operation), call, null, orElse);
    }

    /**
     * Every sync {@code execute}: one admission, then the call, or the rejection answered or thrown <b>here</b>:
     * small enough that C2 inlines it, so a caller catching {@code CircuitOpenException} gets a jump.
     */
    private <T, X extends Exception> T run(String operation, CheckedSupplier<T, X> call,
            Function<? super RuntimeException, ? extends T> fallback) throws X {
        Objects.requireNonNull(call, "call");
        OperationState e = parts.entry(operation);
        Object token = calls.admit(e, false);
        if (token instanceof RuntimeException) {
            if (fallback == null && !calls.hasDefaultFallback()) {
                throw (RuntimeException) token;
            }
            return calls.fallback(e.name, (RuntimeException) token, fallback);
        }
        return calls.proceed(e, token, call);
    }

    /**
     * {@link #execute(String, CheckedSupplier)} for a call without a result: a lambda that returns a value picks
     * that overload; a block lambda without {@code return}, or a {@code Runnable}, picks this one.
     *
     * @throws CircuitOpenException      if the breaker rejects the call and no breaker-wide fallback is set
     *                                   (the fallback's result is ignored)
     * @throws StoreUnavailableException under REJECT when the store failed, and no fallback is set
     */
    public void execute(String operation, Runnable call) {
        Objects.requireNonNull(call, "call");
        run(operation, () -> {
            call.run();
            return null;
        }, null);
    }

    /**
     * The async twin of {@link #execute(String, CheckedSupplier)}: runs {@code call} to start it if admitted;
     * the returned future completes after the outcome is recorded, with the call's own result or exception.
     *
     * <p>A rejection completes the future exceptionally with {@link CircuitOpenException} or
     * {@link StoreUnavailableException} (or with the breaker-wide fallback's result). Past a {@code callTimeout}
     * the future completes with {@link TimeoutException}, a failure, and the call's stage is cancelled where it
     * allows it. Cancelling the returned future cancels the stage the same way and records nothing (a trial
     * cancelled so gives its claim back). Without a {@code callTimeout}, a trial whose stage never completes
     * keeps one of this instance's {@code halfOpenPermits} slots: set a {@code callTimeout} for async calls.
     */
    public <T> CompletableFuture<T> executeAsync(String operation, Supplier<? extends CompletionStage<T>> call) {
        Objects.requireNonNull(call, "call");
        return calls.runAsync(parts.entry(operation), call);
    }

    /**
     * Asks permission for one call of {@code operation}, for code that runs the call itself (a reactive
     * pipeline, an interceptor): a permitted {@link Permit} to complete with exactly one of its outcomes, or a
     * rejected one carrying the {@link Permit#rejection() rejection}; the same admission and outcome rules as
     * {@code execute}. Never throws a rejection; never applies a fallback.
     */
    public Permit tryAcquire(String operation) {
        return calls.acquire(parts.entry(operation));
    }

    /**
     * Whether this instance is an outlier for {@code operation} now: under a quorum, its own failures reached the
     * threshold while the fleet stayed closed ({@link Outlier}); for one reset window from the write that showed
     * it. Always false without a quorum. No store call.
     */
    public boolean isOutlier(String operation) {
        OperationState e = parts.operations.peek(operation);
        return e != null && Outliers.tripped(e, parts.time.nanos());
    }

    /** This breaker's parts (for tests in the package). */
    BreakerParts parts() {
        return parts;
    }

    /**
     * A {@link PermitSlot} for {@code operation}: the allocation-free form of {@link #tryAcquire(String)} for
     * adapters that hold one permit at a time per slot and cannot hand their caller a permit object.
     *
     * @throws IllegalArgumentException if {@code operation} is not a valid operation name
     * @throws IllegalStateException    if this breaker is closed
     */
    public PermitSlot newPermitSlot(String operation) {
        return new PermitSlot(parts, calls, parts.entry(operation).name);
    }

    /**
     * {@code supplier} guarded for {@code operation} (bound once): each {@code get()} runs like
     * {@link #execute(String, CheckedSupplier)}, throwing the rejection unless a breaker-wide fallback answers.
     */
    public <T> Supplier<T> decorateSupplier(String operation, Supplier<? extends T> supplier) {
        bind(operation, supplier, "supplier");
        return () -> run(operation, supplier::get, null);
    }

    /**
     * {@code callable} guarded for {@code operation} (bound once): each {@code call()} runs like
     * {@link #execute(String, CheckedSupplier)}.
     */
    public <T> Callable<T> decorateCallable(String operation, Callable<? extends T> callable) {
        bind(operation, callable, "callable");
        return () -> run(operation, callable::call, null);
    }

    /**
     * {@code runnable} guarded for {@code operation} (bound once): each {@code run()} runs like
     * {@link #execute(String, Runnable)}.
     */
    public Runnable decorateRunnable(String operation, Runnable runnable) {
        bind(operation, runnable, "runnable");
        return () -> execute(operation, runnable);
    }

    /**
     * {@code stage} guarded by this breaker for {@code operation} (bound once): each {@code get()} runs like
     * {@link #executeAsync(String, Supplier)}; a rejection completes the returned stage exceptionally.
     */
    public <T> Supplier<CompletionStage<T>> decorateCompletionStage(String operation,
            Supplier<? extends CompletionStage<T>> stage) {
        bind(operation, stage, "stage");
        return () -> executeAsync(operation, stage);
    }

    private static void bind(String operation, Object target, String what) {
        OperationNames.requireValid(operation);
        Objects.requireNonNull(target, what);
    }

    /**
     * Registers {@code observer} (metrics, events): it is told at once of every operation held
     * ({@code operationAdded}), then of everything that happens; in distributed mode this also subscribes to the
     * store's transition feed, if it has one. Registering the same observer twice has no effect.
     *
     * @return whether it was added
     */
    public boolean addObserver(CircuitBreakerObserver observer) {
        Objects.requireNonNull(observer, "observer");
        return parts.addObserver(observer);
    }

    /**
     * Unregisters {@code observer}; it is told nothing more (a call already under way may still report to it
     * once). The feed subscription stays until {@link #close()}.
     *
     * @return whether it was registered
     */
    public boolean removeObserver(CircuitBreakerObserver observer) {
        return parts.observers.remove(observer);
    }

    /**
     * The state of {@code operation} as this instance knows it, <b>without calling the store</b> (what gauges
     * read): in local mode the in-process state; in distributed mode the last state this instance read, wrote
     * or learned from the feed (while an observer is registered; otherwise only open states). Empty when it
     * knows nothing of it (never used, evicted, or only seen closed before observing began).
     */
    public Optional<BreakerState> localState(String operation) {
        return manual.localState(operation);
    }

    /**
     * The status of {@code operation} as this instance knows it now, with its own jitter, <b>without calling
     * the store</b> (see {@link #localState(String)}); {@link BreakerStatus#CLOSED} when it knows nothing.
     */
    public BreakerStatus localStatus(String operation) {
        return manual.localStatus(operation);
    }

    /**
     * Whether this breaker holds {@code operation} now: it was called, read with {@link #state(String)} or
     * changed through this breaker, and not evicted since. Never creates the operation; no store call.
     */
    public boolean holds(String operation) {
        return operations.peek(Objects.requireNonNull(operation, "operation")) != null;
    }

    /**
     * The state the store holds for {@code operation}, read <b>without registering the operation</b>: unlike
     * {@link #state(String)}, nothing is added (no entry, no counters, no meters), cached or written, so code
     * that answers about names it did not choose (an operator endpoint) grows nothing. Distributed mode: one
     * read of the configured store itself, also under {@link StoreErrorPolicy#LOCAL} (whose in-process fallback
     * is neither consulted nor seeded). Local mode: the in-process state.
     *
     * @return the stored state, or empty if the store holds none for {@code operation}
     * @throws StoreException            if the store fails, whatever it threw and whatever the store error policy
     */
    public Optional<BreakerState> storedState(String operation) {
        return manual.storedState(operation);
    }

    /**
     * The stored state of {@code operation}, read from the store (one read in distributed mode).
     *
     * @return the state, or {@link BreakerState#INITIAL} if none is stored
     * @throws dev.redeye.api.StoreException if the store fails, whatever it threw (except under
     *                                       {@link StoreErrorPolicy#LOCAL}) (as for every method that
     *                                       takes one; see "Operations" in the package documentation)
     */
    public BreakerState state(String operation) {
        return manual.state(parts.entry(operation));
    }

    /**
     * The status of {@code operation} as this instance sees it now (with its own jitter): one store read.
     *
     * @throws dev.redeye.api.StoreException if the store fails (except under {@link StoreErrorPolicy#LOCAL})
     */
    public BreakerStatus status(String operation) {
        return manual.status(parts.entry(operation));
    }

    /**
     * Whether a call to {@code operation} would be allowed now: read-only, one store read, claims nothing.
     * True when closed, and when half-open (a call would then try to claim a trial permit, which may all be
     * taken). If the store fails, answers as the store error policy would: false under REJECT, true otherwise.
     */
    public boolean check(String operation) {
        return manual.check(parts.entry(operation));
    }

    /**
     * Holds {@code operation} open for every instance sharing the store: no trials until {@link #reset}.
     * A transition; fires {@code onStateChange}. A no-op when it is already forced open (see
     * {@link #reset(String)} for the manual changes' cost).
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void forceOpen(String operation) {
        manual.force(parts.entry(operation), BreakerStatus.FORCED_OPEN);
    }

    /**
     * Opens {@code operation} with its reset window already elapsed for every instance, so the next call claims a
     * trial: a new open period, whose write drops the old period's live trial claims. A no-op when it already is
     * so (open, not forced, dated that far back): repeating it starts no new period under a running trial.
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void forceHalfOpen(String operation) {
        manual.force(parts.entry(operation), BreakerStatus.HALF_OPEN);
    }

    /**
     * Closes {@code operation} and resets every counter (and drops live trial claims). A no-op when it is closed
     * and clean already, or has no state at all: nothing is written, so no CLOSED to CLOSED transition fires.
     *
     * <p>The three manual changes ({@link #forceOpen}, {@link #forceHalfOpen}, {@code reset}) read the state first
     * (one store read in distributed mode) and skip a change already in force ({@link Transitions#inForce}): no
     * write, no feed event, no {@code onStateChange} (safe under concurrency: the read found the state the
     * change would make). Otherwise they make the store's atomic transition, which every instance sees.
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void reset(String operation) {
        manual.force(parts.entry(operation), BreakerStatus.CLOSED);
    }

    /**
     * Stores {@code mode} for {@code operation} for every instance sharing the store, like a forced state: it
     * overrides the builder's {@link CircuitBreakerBuilder#mode mode} until another {@code forceMode}, and a
     * {@link #reset} returns to the builder's. {@link BreakerMode#METRICS_ONLY} counts and evaluates but never
     * rejects (what would open is published as {@link dev.redeye.api.TransitionKind#WOULD_OPEN});
     * {@link BreakerMode#DISABLED} admits every call and records nothing; {@link BreakerMode#NORMAL} obeys the
     * strategy whatever the builder's mode; {@link BreakerMode#DEFAULT} removes the operator's mode. The breaker
     * closes with fresh counters ({@link dev.redeye.api.TransitionKind#MODE_CHANGED}, which fires
     * {@code onStateChange}). A no-op when the mode is stored already on a closed breaker with clean counters.
     *
     * @throws NullPointerException          if {@code mode} is null
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void forceMode(String operation, BreakerMode mode) {
        Objects.requireNonNull(mode, "mode");
        manual.forceMode(parts.entry(operation), mode);
    }

    /**
     * Records a success for {@code operation} as if a call had succeeded, bypassing the gate and trial claims
     * (for outcomes observed elsewhere). Not counted in {@link #metrics(String)}.
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void recordSuccess(String operation) {
        manual.record(parts.entry(operation), true);
    }

    /**
     * Records a failure for {@code operation} as if a call had failed, bypassing the gate and trial claims.
     * Not counted in {@link #metrics(String)}.
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void recordFailure(String operation) {
        manual.record(parts.entry(operation), false);
    }

    /** This instance's counters for {@code operation} ({@link Metrics#EMPTY} if never used or evicted). */
    public Metrics metrics(String operation) {
        OperationState e = operations.peek(Objects.requireNonNull(operation, "operation"));
        return e == null ? Metrics.EMPTY : e.metrics();
    }

    /** This instance's counters for every operation it holds (evicted ones are gone), sorted by name; a snapshot. */
    public Map<String, Metrics> allMetrics() {
        return manual.allMetrics();
    }

    /**
     * Whether the opt-in local cache is serving calls: it was requested, in distributed mode, the store has a
     * transition feed, the subscription succeeded (one that failed is retried with backoff, from 0.5 s doubling
     * up to every 30 s), and the breaker is not closed.
     */
    public boolean isLocalCacheActive() {
        return parts.isLocalCacheActive();
    }

    /** This breaker's configuration. */
    public CircuitBreakerConfig config() {
        return parts.config;
    }

    /**
     * Ends the feed subscription, stops the call-timeout thread and closes the store (the in-process one in
     * local mode; the configured one unless {@code closeStore(false)}). Idempotent. Calls already admitted
     * finish; their outcome writes fail quietly.
     */
    @Override
    public void close() {
        parts.close();
    }

    @Override
    public String toString() {
        return parts.toString();
    }
}
