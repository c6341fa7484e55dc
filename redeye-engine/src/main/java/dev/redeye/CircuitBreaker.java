package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.Store;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreUnavailableException;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.Transitions;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>This class is the public face; the work is done by package-private parts, each with one job:
 * {@code Calls} (running calls: one admission and one completion for {@code execute}, {@code executeAsync} and
 * permits), {@code Gate} (admission), {@code Trials} (the half-open protocol), {@code OutcomeRecorder} (what a
 * call's end means and its best-effort write), {@code StateViews} (the open-state view and the local cache),
 * {@code FeedHandler} (the transition feed), {@code Operations} (the bounded per-operation registry),
 * {@code StoreAccess} (capabilities and their fallbacks), {@code DegradingStore} (the LOCAL policy),
 * {@code CallTimer} (call timeouts) and {@code Observers} (observers and listeners, guarded).
 *
 * <h2>Cost</h2>
 * <ul>
 * <li>Local mode, consecutive strategy, closed and healthy: one map lookup and one volatile read before the
 * call, two counter increments after it; no lock, no allocation, no clock or ticker read (unless a
 * {@code callTimeout} is set: two ticker reads).</li>
 * <li>Distributed mode, closed: one ticker read and one store read per call; the consecutive and leaky strategies
 * write only when the read showed failures to clear (or leak) or the call failed; the error-rate strategy writes
 * every outcome. With the opt-in {@linkplain CircuitBreakerBuilder#localCache(Duration) local cache}, zero reads while the cached
 * closed state is trusted and younger than its stale tolerance, then one read per operation however many threads
 * call (single-flight: the callers that arrive meanwhile wait for it).</li>
 * <li>Open: rejections come from a per-operation cache with zero store reads, re-verified with one read at
 * most once per {@code openCacheRefresh} and always re-read at this instance's own trial-eligibility instant
 * (the cache can make a rejection late, never an allow early). A rejection builds one exception (without a
 * stack trace by default), thrown once; {@link #executeOrElse(String, CheckedSupplier, Object)} and
 * {@link #executeOrElseGet(String, CheckedSupplier, Supplier)} build none, so that in local mode they
 * allocate nothing.</li>
 * <li>Half-open: the winner of a trial claim runs the call as a trial (a read, a claim, a re-read, the
 * outcome, a release). A caller that loses the claim is rejected, and so is every caller of the operation on
 * this instance after it, with zero store operations, until the trial's outcome is known (this instance's own
 * write, or a feed event) or the winner's claim could have expired ({@code trialTimeout} after the lost
 * claim); then one caller reads and claims again. At most {@code halfOpenPermits} trials of an operation run
 * on one instance at once, also after their claims expired, so a hanging dependency never collects a cascade
 * of hung trials.</li>
 * </ul>
 *
 * <h2>Outcomes</h2>
 * A call's own exception is always rethrown unchanged. Whether it counts as a failure is decided by
 * {@link CircuitBreakerBuilder#recordFailure(Predicate)} (default: every exception and error counts); an exception that does not
 * count is recorded as a success. Interrupts and cancellation are not outcomes of the dependency and are never
 * recorded: a call that threw {@link InterruptedException}, {@link java.util.concurrent.CancellationException},
 * {@link java.nio.channels.ClosedByInterruptException} or an {@link java.io.InterruptedIOException} (other than
 * {@link java.net.SocketTimeoutException}), or an exception caused by one of them (the cause chain is searched: a
 * client's {@code RuntimeException} around an {@code InterruptedException}, an {@code UncheckedIOException} around
 * an {@code InterruptedIOException}, a {@code CompletionException} around a cancellation), or that threw anything
 * while its thread was interrupted, counts in {@link Metrics#calls()} only; a trial ended that way gives its claim
 * back and leaves the state as it is. The thread's interrupt status is restored: still set when the call left it
 * set, and set again when the call threw one of the exceptions that report an interrupt (or one caused by it). A
 * returned result counts as a failure when {@link CircuitBreakerBuilder#recordResult(Predicate)} says so; it is still returned.
 *
 * <h2>Store errors</h2>
 * Anything the store throws but a {@link VirtualMachineError}, not only {@link StoreException} (a driver's own
 * exception, a checked exception thrown sneakily, a closed pool, a {@code NullPointerException}, a
 * {@code NoClassDefFoundError} of a driver class), is a store error handled under the {@link StoreErrorPolicy};
 * it never reaches the caller as if the call had failed, and never replaces the call's own exception. A trial
 * claim that throws is a store error too: REJECT rejects with {@link StoreUnavailableException} without running
 * the call; ALLOW and LOCAL fall back to a per-instance claim (at most {@code halfOpenPermits} trials per
 * instance), never letting every caller through. Writes after a call are best-effort: a store error there is
 * logged (at most every 10 s), counted in {@link Metrics#storeErrors()}, reported to {@code onStoreError} and
 * never thrown.
 *
 * <h2>Time</h2>
 * Two kinds of time. What is <em>stored</em>, and so read by other instances ({@code openedAt},
 * {@code lastFailureAt}, the {@code now} every store operation is given), is wall-clock time from the
 * configured {@link Clock} ({@link CircuitBreakerBuilder#clock}). What is <em>local</em> to this instance (how old a
 * local-cache entry is, when an open view is re-verified, the hold after a lost claim, the backoff after a
 * trial failure it could not write, permit leases, whether a call took longer than {@code callTimeout},
 * observer timings) is a monotonic duration on the {@link Ticker} ({@link CircuitBreakerBuilder#ticker}, {@link System#nanoTime()}
 * by default): a wall clock that steps (NTP, a resumed virtual machine) never moves a local deadline. Skew
 * between instances' clocks shifts what a stored time means, and is bounded where it would hurt: a trial's
 * eligibility is the stored {@code openedAt} plus this instance's (jittered) reset window by its clock, but
 * never later than that window after this instance first saw the open period, by its ticker. So a member
 * whose clock runs ahead, writing an {@code openedAt} in everyone's future, delays the others by at most one
 * window; a clock that runs behind can bring a trial forward, but the store's claim still admits at most
 * {@code halfOpenPermits} trials fleet-wide, and their outcome is written with the trial instance's own time.
 * Trial-claim expiry runs on the store's own clock; the {@code callTimeout} interrupt, an async call's
 * timeout and a caller's wait for another caller's cache read are real waits (real time).
 *
 * <h2>Operations</h2>
 * Each operation name has its own state and metrics. A name is checked the first time this breaker sees it,
 * before any store call, by every method that takes one ({@code execute*}, {@code tryAcquire},
 * {@code decorate*}, {@code state}, {@code status}, {@code check}, {@code force*}, {@code reset},
 * {@code record*}): an empty name, one longer than {@value OperationNames#MAX_LENGTH} UTF-16 code units, one
 * with an unpaired surrogate or with U+0000 is an {@link IllegalArgumentException} to the caller, never a
 * store error ({@link OperationNames#requireValid}); a name already known costs nothing more.
 * {@code localState}, {@code localStatus} and {@code metrics} never create an operation and answer "none" for
 * any name they do not hold. With {@link CircuitBreakerBuilder#maxOperations(int)}, the breaker
 * keeps at most that many: past it, the least recently used operations are evicted (approximately; never one
 * with a trial running), losing this instance's metrics and cached views of them; in local mode an evicted
 * operation's stored state goes too, unless it is open (an open breaker is never closed by an eviction).
 *
 * <p>Thread-safe. No lock is held while a user's call runs. {@link #close()} ends the feed subscription, stops
 * the call-timeout thread and closes the store (unless {@link CircuitBreakerBuilder#closeStore(boolean) closeStore(false)});
 * a closed breaker throws {@link IllegalStateException}. A call already admitted when the breaker closes
 * finishes normally: its outcome write fails quietly.
 */
public final class CircuitBreaker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);
    /** Local-cache entries older than this are re-read even under a longer stale tolerance. */
    static final long CACHE_POLL_MILLIS = 5_000;

    private final CircuitBreakerConfig config;
    private final Policy policy;
    private final Clock clock;
    private final Monotonic time;
    private final InMemoryStore local;
    private final DegradingStore degrading;
    private final Store store;
    private final boolean closeStore;
    private final boolean cacheWanted;
    private final StoreAccess access;
    private final StoreErrors errors;
    private final Observers observers;
    private final Operations operations;
    private final StateViews views;
    private final OutcomeRecorder recorder;
    private final CallTimer timer;
    private final Calls calls;
    private final Object feedLock = new Object();
    private volatile FeedHandler feed;
    private final AtomicBoolean closed = new AtomicBoolean();

    CircuitBreaker(CircuitBreakerConfig config, long seed) {
        this.config = config;
        this.policy = config.policy();
        this.clock = config.clock();
        this.time = new Monotonic(config.ticker());
        long callTimeoutMillis = config.callTimeout().map(Duration::toMillis).orElse(0L);
        this.errors = new StoreErrors(time, config.onStoreError().orElse(null));
        this.observers = new Observers(time);
        Store configured = config.store().orElse(null);
        this.cacheWanted = config.localCacheStaleTolerance().isPresent();
        if (configured == null) {
            this.local = new InMemoryStore();
            this.degrading = null;
            this.store = local;
            this.closeStore = true;
            this.access = new StoreAccess(local, local, InMemoryStore.class.getName(), LOG, false, null, time);
        } else {
            this.local = null;
            this.degrading = config.storeErrorPolicy() == StoreErrorPolicy.LOCAL
                    ? new DegradingStore(configured, this::degradedStoreError)
                    : null;
            this.store = degrading != null ? degrading : configured;
            this.closeStore = config.closeStore();
            this.access = new StoreAccess(store, configured, Stores.typeOf(configured).getName(), LOG, cacheWanted,
                    observers, time);
        }
        this.operations = new Operations(config.maxOperations().orElse(0), this::evicted, this::added);
        long cacheMaxAge = config.localCacheStaleTolerance()
                .map(d -> Math.min(d.toMillis(), CACHE_POLL_MILLIS)).orElse(0L);
        this.views = new StateViews(local == null, policy, seed, config.openCacheRefresh().toMillis(), cacheMaxAge,
                observers);
        Rejections rejections = new Rejections(config.writableStackTraces());
        // the policy is about a shared store; in local mode the in-process store fails only once closed
        boolean reject = config.storeErrorPolicy() == StoreErrorPolicy.REJECT && local == null;
        Trials trials = new Trials(clock, time, local, access, views, errors, rejections, config.halfOpenPermits(),
                config.trialTimeout(), reject, observers);
        Gate gate = new Gate(clock, time, local, access, views, trials, errors, rejections, reject);
        this.recorder = new OutcomeRecorder(clock, time, policy, access, views, trials, errors, config.recordFailure(),
                config.recordResult().orElse(null), config.onStateChange().orElse(null), observers);
        this.timer = callTimeoutMillis > 0 ? new CallTimer() : null;
        this.calls = new Calls(time, gate, recorder, trials, timer, callTimeoutMillis,
                config.fallback().orElse(null), observers);
        Listeners listeners = Listeners.of(config);
        if (listeners != null) {
            observers.add(listeners);
        }
        boolean fleetListener = config.onFleetStateChange().isPresent();
        if (fleetListener && access.feed == null) {
            LOG.warn("onFleetStateChange is set but store {} lacks TransitionFeed: fleet transitions are not reported",
                    configured == null ? "?" : Stores.typeOf(configured).getName());
        }
        boolean follow = configured != null && config.followFeed();
        if (follow && access.feed == null && !fleetListener) {
            LOG.warn("followFeed is set but store {} lacks TransitionFeed: other instances' transitions are seen at "
                    + "the next read", configured.getClass().getName());
        }
        if ((configured != null && cacheWanted) || fleetListener || follow) {
            subscribeFeed();
        }
    }

    /** Subscribes to the store's feed once, if it has one (see {@link FeedHandler}). */
    private void subscribeFeed() {
        synchronized (feedLock) {
            if (feed == null && access.feed != null && !closed.get()) {
                Store named = config.store().orElse(store);
                feed = new FeedHandler(access, operations, views, time, Stores.typeOf(named).getName(), observers,
                        local == null && cacheWanted);
            }
        }
    }

    /** A builder with the reference defaults (local mode unless a store is set). */
    public static CircuitBreakerBuilder builder() {
        return new CircuitBreakerBuilder();
    }

    /** A local-mode breaker with the reference defaults; cheap, no threads. */
    public static CircuitBreaker ofDefaults() {
        return builder().build();
    }

    // ---------------------------------------------------------------------------------------------- execute

    /**
     * Runs {@code call} if the breaker for {@code operation} allows it, records the outcome, and returns the
     * call's result or rethrows its exception unchanged.
     *
     * <p>With a {@code callTimeout}, the wait is bounded by interrupting the calling thread at the deadline
     * (real time): a call that responds to interrupts ends then, usually with its own
     * {@link InterruptedException} or an I/O exception, which is rethrown; it counts as a timeout failure, and
     * the engine clears its own interrupt from the thread before returning. A call that ignores interrupts runs
     * to its end and still counts as a failure. A call that returns within the deadline but took longer than
     * {@code callTimeout} by the breaker's ticker also counts as a failure; its result is still returned.
     *
     * @param operation the operation name (see {@link OperationNames#requireValid}); each name has its own breaker
     *                  state
     * @param call      the call to guard
     * @return the call's result, or the configured fallback's result for a rejected call
     * @throws X                          the call's own exception, unchanged
     * @throws CircuitOpenException       if the breaker is open (or half-open with every trial permit taken)
     *                                    and no fallback is configured
     * @throws StoreUnavailableException  under {@link StoreErrorPolicy#REJECT} when the store could not be
     *                                    read or a trial could not be claimed, and no fallback is configured
     * @throws NullPointerException       if {@code operation} or {@code call} is null
     * @throws IllegalArgumentException   if {@code operation} is not a valid name ({@link OperationNames#requireValid})
     * @throws IllegalStateException      if the breaker is closed
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
     *
     * @throws NullPointerException if {@code fallback} is null
     */
    public <T, X extends Exception> T execute(String operation, CheckedSupplier<T, X> call,
            Function<? super RuntimeException, ? extends T> fallback) throws X {
        Objects.requireNonNull(fallback, "fallback");
        return run(operation, call, fallback);
    }

    /**
     * Like {@link #execute(String, CheckedSupplier)}, but a rejected call ({@link CircuitOpenException} or
     * {@link StoreUnavailableException}) returns {@code orElse} instead, and <b>no exception is built</b> for
     * it: the rejection costs a few field reads and two counter increments, and allocates nothing (unless an
     * observer or the {@code onCallRejected} listener is registered: they are told of the rejection, so it is
     * built for them; a {@link StoreUnavailableException}, which carries the store's error, is always built).
     * Takes precedence over the breaker-wide fallback. A call that ran and failed still rethrows its own
     * exception; {@link #metrics(String)} counts the rejection as with {@code execute}.
     *
     * <pre>{@code
     * Quote q = breaker.executeOrElse("pricing", () -> pricing.quote(item), Quote.UNAVAILABLE);
     * }</pre>
     *
     * @param orElse the result of a rejected call (may be null); for a computed one, use
     *               {@link #executeOrElseGet(String, CheckedSupplier, Supplier)}
     * @return the call's result, or {@code orElse} if the breaker rejected it
     * @throws X                        the call's own exception, unchanged
     * @throws NullPointerException     if {@code operation} or {@code call} is null
     * @throws IllegalArgumentException if {@code operation} is not a valid name ({@link OperationNames#requireValid})
     * @throws IllegalStateException    if the breaker is closed
     */
    public <T, X extends Exception> T executeOrElse(String operation, CheckedSupplier<T, X> call, T orElse)
            throws X {
        Objects.requireNonNull(call, "call");
        return calls.runOrElse(entry(operation), call, orElse, null);
    }

    /**
     * Like {@link #executeOrElse(String, CheckedSupplier, Object)}, with the result of a rejected call made by
     * {@code orElse} (called on the caller's thread, only when the call is rejected). No exception is built for
     * the rejection (with the same exceptions as {@code executeOrElse}); an exception {@code orElse} throws
     * reaches the caller as is. For a fallback that needs to know why the call was rejected (its
     * {@code retryAfter()}), use {@link #execute(String, CheckedSupplier, Function)}, which builds the exception.
     *
     * @param orElse makes the result of a rejected call (its result may be null)
     * @return the call's result, or {@code orElse.get()} if the breaker rejected it
     * @throws X                        the call's own exception, unchanged
     * @throws NullPointerException     if {@code operation}, {@code call} or {@code orElse} is null
     * @throws IllegalArgumentException if {@code operation} is not a valid name ({@link OperationNames#requireValid})
     * @throws IllegalStateException    if the breaker is closed
     */
    public <T, X extends Exception> T executeOrElseGet(String operation, CheckedSupplier<T, X> call,
            Supplier<? extends T> orElse) throws X {
        Objects.requireNonNull(call, "call");
        Objects.requireNonNull(orElse, "orElse");
        return calls.runOrElse(entry(operation), call, null, orElse);
    }

    /**
     * Every sync {@code execute}: one admission, then the call, or the rejection answered by a fallback or
     * thrown <b>here</b>. The gate returns rejections instead of throwing them, and this method stays small
     * (the admission and the call are calls), so that C2 inlines it into the caller and a caller catching
     * {@code CircuitOpenException} gets a jump rather than an exception unwinding compiled frames.
     */
    private <T, X extends Exception> T run(String operation, CheckedSupplier<T, X> call,
            Function<? super RuntimeException, ? extends T> fallback) throws X {
        Objects.requireNonNull(call, "call");
        OperationState e = entry(operation);
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
     * Runs {@code call} if the breaker for {@code operation} allows it and records the outcome, like
     * {@link #execute(String, CheckedSupplier)} for a call without a result. A lambda that returns a value
     * picks the {@code CheckedSupplier} overload; a block lambda without {@code return}, or a {@code Runnable},
     * picks this one.
     *
     * @throws CircuitOpenException      if the breaker rejects the call and no breaker-wide fallback is set
     *                                   (the fallback's result is ignored)
     * @throws StoreUnavailableException under REJECT when the store failed, and no fallback is set
     * @throws NullPointerException      if an argument is null
     * @throws IllegalArgumentException  if {@code operation} is not a valid name ({@link OperationNames#requireValid})
     * @throws IllegalStateException     if the breaker is closed
     */
    public void execute(String operation, Runnable call) {
        Objects.requireNonNull(call, "call");
        run(operation, () -> {
            call.run();
            return null;
        }, null);
    }

    /**
     * The async twin of {@link #execute(String, CheckedSupplier)}: gates the call, runs {@code call} to start
     * it, and records the outcome when its stage completes. The returned future completes after the outcome
     * is recorded, with the call's own result or exception.
     *
     * <p>A rejection completes the future exceptionally with {@link CircuitOpenException} or
     * {@link StoreUnavailableException} (or with the breaker-wide fallback's result). With a
     * {@code callTimeout}, once that much real time has passed the future completes exceptionally with
     * {@link TimeoutException}, which counts as a failure, and the call's stage is cancelled
     * ({@code toCompletableFuture().cancel(true)}, where the stage allows it); its later outcome is ignored.
     * Cancelling the returned future cancels the call's stage the same way and records nothing (a
     * cancellation is not a failure); a trial cancelled so gives its claim back. A stage that completes
     * with a {@link java.util.concurrent.CancellationException} is not a failure either. Without a
     * {@code callTimeout}, a trial whose stage never completes keeps holding one of this instance's
     * {@code halfOpenPermits} trial slots for the operation (that is what stops a cascade of hung trials):
     * set a {@code callTimeout} for async calls.
     *
     * @throws NullPointerException     if {@code operation} or {@code call} is null
     * @throws IllegalArgumentException if {@code operation} is not a valid name ({@link OperationNames#requireValid})
     * @throws IllegalStateException    if the breaker is closed
     */
    public <T> CompletableFuture<T> executeAsync(String operation, Supplier<? extends CompletionStage<T>> call) {
        Objects.requireNonNull(call, "call");
        return calls.runAsync(entry(operation), call);
    }

    // ------------------------------------------------------------------------------------------- permits

    /**
     * Asks permission for one call of {@code operation}, for code that runs the call itself (a reactive
     * pipeline, an interceptor, a coroutine): a permitted {@link Permit} to complete with exactly one of
     * {@link Permit#onSuccess()}, {@link Permit#onFailure(Throwable)} or {@link Permit#release()}, or a rejected
     * one carrying the {@link Permit#rejection() rejection}. A half-open breaker hands the winner of the trial
     * claim a {@linkplain Permit#isTrial() trial permit}. Never throws a rejection; never applies a fallback.
     *
     * <p>{@code execute} and {@code executeAsync} use the same admission and the same outcome rules; see
     * {@link Permit} for what a permit that is never completed holds, and for how long.
     *
     * @throws NullPointerException     if {@code operation} is null
     * @throws IllegalArgumentException if {@code operation} is not a valid name ({@link OperationNames#requireValid})
     * @throws IllegalStateException    if the breaker is closed
     */
    public Permit tryAcquire(String operation) {
        return calls.acquire(entry(operation));
    }

    // ----------------------------------------------------------------------------------------- decorators

    /**
     * {@code supplier} guarded by this breaker for {@code operation} (bound once): each {@code get()} runs
     * like {@link #execute(String, CheckedSupplier)}, throwing the rejection ({@link CircuitOpenException} or
     * {@link StoreUnavailableException}) unless a breaker-wide fallback answers it.
     *
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code operation} is not a valid name ({@link OperationNames#requireValid})
     */
    public <T> Supplier<T> decorateSupplier(String operation, Supplier<? extends T> supplier) {
        requireOperation(operation);
        Objects.requireNonNull(supplier, "supplier");
        return () -> run(operation, supplier::get, null);
    }

    /**
     * {@code callable} guarded by this breaker for {@code operation} (bound once): each {@code call()} runs like
     * {@link #execute(String, CheckedSupplier)} and throws the callable's own exception unchanged.
     *
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code operation} is not a valid name ({@link OperationNames#requireValid})
     */
    public <T> Callable<T> decorateCallable(String operation, Callable<? extends T> callable) {
        requireOperation(operation);
        Objects.requireNonNull(callable, "callable");
        return () -> run(operation, callable::call, null);
    }

    /**
     * {@code runnable} guarded by this breaker for {@code operation} (bound once): each {@code run()} runs like
     * {@link #execute(String, Runnable)}.
     *
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code operation} is not a valid name ({@link OperationNames#requireValid})
     */
    public Runnable decorateRunnable(String operation, Runnable runnable) {
        requireOperation(operation);
        Objects.requireNonNull(runnable, "runnable");
        return () -> execute(operation, runnable);
    }

    /**
     * {@code stage} guarded by this breaker for {@code operation} (bound once): each {@code get()} runs like
     * {@link #executeAsync(String, Supplier)}; a rejection completes the returned stage exceptionally.
     *
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code operation} is not a valid name ({@link OperationNames#requireValid})
     */
    public <T> Supplier<CompletionStage<T>> decorateCompletionStage(String operation,
            Supplier<? extends CompletionStage<T>> stage) {
        requireOperation(operation);
        Objects.requireNonNull(stage, "stage");
        return () -> executeAsync(operation, stage);
    }

    private static void requireOperation(String operation) {
        OperationNames.requireValid(operation);
    }

    // ----------------------------------------------------------------------------------------- observers

    /**
     * Registers {@code observer} (metrics, events; see {@link CircuitBreakerObserver}): it is told at once of
     * every operation this breaker holds ({@code operationAdded}), then of everything that happens. In
     * distributed mode this also subscribes the breaker to the store's transition feed, if it has one and is
     * not subscribed yet. Registering the same observer twice has no effect.
     *
     * @return whether it was added
     * @throws NullPointerException  if {@code observer} is null
     * @throws IllegalStateException if the breaker is closed
     */
    public boolean addObserver(CircuitBreakerObserver observer) {
        Objects.requireNonNull(observer, "observer");
        if (closed.get()) {
            throw new IllegalStateException("circuit breaker is closed");
        }
        if (!observers.add(observer)) {
            return false;
        }
        for (OperationState e : operations.all()) {
            try {
                observer.operationAdded(e);
            } catch (RuntimeException ex) {
                LOG.warn("observer {} threw in operationAdded", observer, ex);
            }
        }
        if (local == null) {
            subscribeFeed();
        }
        return true;
    }

    /**
     * Unregisters {@code observer}; it is told nothing more (a call already under way may still report to it
     * once). The feed subscription stays until {@link #close()}.
     *
     * @return whether it was registered
     */
    public boolean removeObserver(CircuitBreakerObserver observer) {
        return observers.remove(observer);
    }

    /**
     * The state of {@code operation} as this instance knows it, <b>without calling the store</b> (what gauges
     * read): in local mode the in-process state; in distributed mode the last state this instance read, wrote
     * or learned from the feed (tracked while an observer is registered; otherwise only open states are
     * remembered). Empty when this instance knows nothing of it (never used, evicted, or only seen closed before
     * observing began). Never creates the operation.
     */
    public Optional<BreakerState> localState(String operation) {
        OperationState e = operations.peek(Objects.requireNonNull(operation, "operation"));
        if (local != null) {
            BreakerState s;
            try {
                s = local.peek(operation);
            } catch (StoreException closedMeanwhile) {
                return Optional.empty();
            }
            return Optional.ofNullable(s != null ? s : e != null ? BreakerState.INITIAL : null);
        }
        return e == null ? Optional.empty() : Optional.ofNullable(StateViews.known(e));
    }

    /**
     * The status of {@code operation} as this instance knows it now, with its own jitter, <b>without calling
     * the store</b> (see {@link #localState(String)}); {@link BreakerStatus#CLOSED} when it knows nothing.
     */
    public BreakerStatus localStatus(String operation) {
        BreakerState s = localState(operation).orElse(BreakerState.INITIAL);
        return views.status(operation, operations.peek(operation), s, clock.millis(), time.nanos());
    }

    /**
     * Whether this breaker holds {@code operation} now: it was called, read with {@link #state(String)} or
     * changed through this breaker, and not evicted since. Never creates the operation; no store call.
     *
     * @throws NullPointerException if {@code operation} is null
     */
    public boolean holds(String operation) {
        return operations.peek(Objects.requireNonNull(operation, "operation")) != null;
    }

    /**
     * The state the store holds for {@code operation}, read <b>without registering the operation</b> on this
     * breaker: unlike {@link #state(String)}, nothing is added (no per-operation entry, no counters, no meters
     * an observer would register for it), nothing is cached and nothing is written, whatever the name. For code
     * that answers about names it did not choose (an operator endpoint, a command line): reading made-up names
     * costs one store read each and grows nothing.
     *
     * <p>Distributed mode: one read of the configured store itself, also under {@link StoreErrorPolicy#LOCAL}
     * (whose in-process fallback is neither consulted nor seeded). Local mode: the in-process state, no clock
     * read.
     *
     * @return the stored state, or empty if the store holds none for {@code operation}
     * @throws StoreException            if the store fails, whatever it threw and whatever the store error policy
     * @throws NullPointerException      if {@code operation} is null
     * @throws IllegalArgumentException  if {@code operation} is empty
     * @throws IllegalStateException     if the breaker is closed
     */
    public Optional<BreakerState> storedState(String operation) {
        requireOperation(operation);
        if (closed.get()) {
            throw new IllegalStateException("circuit breaker is closed");
        }
        if (local != null) {
            return Optional.ofNullable(local.peek(operation));
        }
        Store real = config.store().orElseThrow();
        try {
            return Objects.requireNonNull(real.get(operation), "the store answered get with null");
        } catch (Throwable e) { // also a checked exception a driver threw sneakily, or a LinkageError
            throw StoreAccess.storeError("get", e);
        }
    }

    // ------------------------------------------------------------------------------------------ operations

    private OperationState entry(String operation) {
        if (closed.get()) {
            throw new IllegalStateException("circuit breaker is closed");
        }
        return operations.use(operation);
    }

    private void added(OperationState e) {
        Observers.Set o = observers.current();
        if (o != null) {
            o.operationAdded(e);
        }
    }

    /** An operation evicted past maxOperations: drop what only it needed (see the class comment). */
    private void evicted(OperationState e) {
        Observers.Set o = observers.current();
        if (o != null) {
            o.operationEvicted(e);
        }
        try {
            if (local != null) {
                BreakerState s = local.get(e.name).orElse(null);
                if (s != null && !s.open()) {
                    // A closed state is forgotten; an open one stays open. Best effort: a call of this (least
                    // recently used) operation racing the eviction may open it between the check and the delete.
                    local.delete(e.name);
                }
            } else if (degrading != null) {
                degrading.forget(e.name);
            }
        } catch (StoreException closedMeanwhile) {
            // the breaker is closing: nothing left to free
        }
    }

    /** A store error the LOCAL policy absorbed; never throws (it runs inside a store call). */
    private void degradedStoreError(String operation, Throwable ex) {
        OperationState e = operations.peek(operation);
        if (e != null) {
            errors.report(e, ex);
        } else {
            errors.reportUncounted(operation, ex);
        }
    }

    // ---------------------------------------------------------------------------------------- manual API

    /**
     * The stored state of {@code operation}, read from the store (one read in distributed mode).
     *
     * @return the state, or {@link BreakerState#INITIAL} if none is stored
     * @throws dev.redeye.api.StoreException if the store fails, whatever it threw (except under
     *                                       {@link StoreErrorPolicy#LOCAL})
     * @throws IllegalArgumentException     if {@code operation} is not a valid name (as for every method that
     *                                       takes one; see the class comment)
     */
    public BreakerState state(String operation) {
        OperationState e = entry(operation);
        if (local != null) {
            BreakerState s = local.peek(e.name);
            return s == null ? BreakerState.INITIAL : s;
        }
        long tick = time.nanos();
        int stamp = views.stampBeforeStoreCall(e);
        BreakerState s = access.get(e.name);
        views.noteRead(e, s, tick, stamp);
        return s;
    }

    /**
     * The status of {@code operation} as this instance sees it now (with its own jitter): one store read.
     *
     * @throws dev.redeye.api.StoreException if the store fails (except under {@link StoreErrorPolicy#LOCAL})
     */
    public BreakerStatus status(String operation) {
        BreakerState s = state(operation);
        return views.status(operation, operations.peek(operation), s, clock.millis(), time.nanos());
    }

    /**
     * Whether a call to {@code operation} would be allowed now: read-only, one store read, claims nothing.
     * True when closed, and when half-open (a call would then try to claim a trial permit, which may all be
     * taken). If the store fails, answers as the store error policy would: false under REJECT, true otherwise.
     */
    public boolean check(String operation) {
        BreakerStatus s;
        try {
            s = status(operation);
        } catch (StoreException ex) {
            errors.report(entry(operation), ex);
            return config.storeErrorPolicy() != StoreErrorPolicy.REJECT;
        }
        return s == BreakerStatus.CLOSED || s == BreakerStatus.HALF_OPEN;
    }

    /**
     * Holds {@code operation} open for every instance sharing the store: no trials until {@link #reset}.
     * A transition; fires {@code onStateChange}. A no-op when it is already forced open (see
     * {@link #reset(String)} for the manual changes' cost).
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void forceOpen(String operation) {
        force(operation, BreakerStatus.FORCED_OPEN);
    }

    /**
     * Opens {@code operation} with its reset window already elapsed for every instance, so the next call claims a
     * trial: a new open period, so the live trial claims of the old one go with the same write (a hung trial on
     * another instance does not hold the forced period for {@code trialTimeout}). A no-op when it already is so
     * (open, not forced, dated that far back), so that repeating it does not start a new open period under a
     * running trial.
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void forceHalfOpen(String operation) {
        force(operation, BreakerStatus.HALF_OPEN);
    }

    /**
     * Closes {@code operation} and resets every counter (and drops live trial claims). A no-op when it is closed
     * and clean already, or has no state at all: nothing is written, so no CLOSED to CLOSED transition fires.
     *
     * <p>The three manual changes ({@link #forceOpen}, {@link #forceHalfOpen}, {@code reset}) read the state first
     * (one store read in distributed mode) and skip a change whose target is already in force
     * ({@link Transitions#inForce}): no write, no version bump, no feed event, no {@code onStateChange}. Otherwise
     * they make the store's atomic transition, which every instance sees on the feed. Skipping is safe under
     * concurrency: the read found the target in force, which is the state the change would have made.
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void reset(String operation) {
        force(operation, BreakerStatus.CLOSED);
    }

    private void force(String operation, BreakerStatus target) {
        OperationState e = entry(operation);
        long now = clock.millis();
        long tick = time.nanos();
        int stamp = views.stampBeforeStoreCall(e);
        BreakerState current = access.get(e.name);
        if (Transitions.inForce(current, target, policy, now)) {
            views.noteRead(e, current, tick, stamp);
            return;
        }
        stamp = views.stampBeforeStoreCall(e);
        recorder.afterWrite(e, access.force(e.name, target, policy, now), now, tick, stamp);
    }

    /**
     * Records a success for {@code operation} as if a call had succeeded, bypassing the gate and trial claims
     * (for outcomes observed elsewhere). Not counted in {@link #metrics(String)}.
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void recordSuccess(String operation) {
        record(operation, true);
    }

    /**
     * Records a failure for {@code operation} as if a call had failed, bypassing the gate and trial claims.
     * Not counted in {@link #metrics(String)}.
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void recordFailure(String operation) {
        record(operation, false);
    }

    private void record(String operation, boolean success) {
        OperationState e = entry(operation);
        long now = clock.millis();
        long tick = time.nanos();
        int stamp = views.stampBeforeStoreCall(e);
        recorder.afterWrite(e, access.record(e.name, success, policy, now), now, tick, stamp);
    }

    /** This instance's counters for {@code operation} ({@link Metrics#EMPTY} if never used or evicted). */
    public Metrics metrics(String operation) {
        OperationState e = operations.peek(Objects.requireNonNull(operation, "operation"));
        return e == null ? Metrics.EMPTY : e.metrics();
    }

    /** This instance's counters for every operation it holds (evicted ones are gone), sorted by name; a snapshot. */
    public Map<String, Metrics> allMetrics() {
        Map<String, Metrics> out = new TreeMap<>();
        for (OperationState e : operations.all()) {
            out.put(e.name, e.metrics());
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * Whether the opt-in local cache is serving calls: it was requested, this breaker is in distributed mode,
     * the store offers a transition feed and the subscription succeeded, and the breaker is not closed. A
     * subscription that failed at build is retried with backoff (from 0.5 s, doubling up to every 30 s, on the
     * engine's shared timer thread): this turns true when a retry succeeds.
     */
    public boolean isLocalCacheActive() {
        FeedHandler f = feed;
        return f != null && f.cacheActive() && !closed.get();
    }

    /** This breaker's configuration. */
    public CircuitBreakerConfig config() {
        return config;
    }

    /**
     * Ends the feed subscription, stops the call-timeout thread and closes the store (the in-process one in
     * local mode; the configured one unless {@code closeStore(false)}). Idempotent. Calls already admitted
     * finish; their outcome writes fail quietly.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        observers.removeAll();
        try {
            FeedHandler f;
            synchronized (feedLock) {
                f = feed;
            }
            if (f != null) {
                f.close();
            }
        } catch (Throwable ex) { // the store's subscription: every store error, as everywhere
            LOG.warn("closing the feed subscription failed", StoreErrors.storeError(ex));
        } finally {
            if (timer != null) {
                timer.close();
            }
            try {
                if (closeStore) {
                    store.close();
                } else if (degrading != null) {
                    degrading.closeLocalOnly(); // the user keeps the real store; ours goes
                }
            } catch (Throwable ex) {
                LOG.warn("closing the store failed", StoreErrors.storeError(ex));
            }
        }
    }

    @Override
    public String toString() {
        return "CircuitBreaker[" + (local != null ? "local" : config.store().map(s -> Stores.typeOf(s).getSimpleName())
                .orElse("?")) + ", " + operations.size() + " operations]";
    }
}
