/**
 * The redeye engine: {@link dev.redeye.CircuitBreaker} with its {@link dev.redeye.CircuitBreakerBuilder} and
 * immutable {@link dev.redeye.CircuitBreakerConfig}, the in-process {@link dev.redeye.InMemoryStore} that local
 * mode runs
 * on, and {@link dev.redeye.Stores} to open a shared store from a URI.
 *
 * <h2>Local mode</h2>
 * Without a store, state lives in process memory. The closed, healthy path of the consecutive strategy takes
 * no lock and allocates nothing: one map lookup of the operation's entry, one volatile read of its state, the
 * call, two counter increments ({@link java.util.concurrent.atomic.LongAdder}); on a success with nothing to
 * clear it writes nothing and reads neither the clock nor the ticker. An open breaker's rejection answered by
 * {@code executeOrElse} costs about as much: no exception, no allocation, and on the system clock and ticker
 * no clock read before the operation is due for a trial. {@code AllocationTest} proves the "no allocation"
 * parts with the JVM's per-thread allocation counter; the comparison with Resilience4j and Failsafe is in
 * {@code redeye-bench}:
 * <pre>
 * mvn -B -q install -pl redeye-bench -DskipTests
 * java -jar redeye-bench/target/benchmarks.jar HealthyPathBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc
 * </pre>
 * ({@code -prof gc} reports {@code gc.alloc.rate.norm}, which should read 0 B/op for redeye's local mode.)
 *
 * <h2>Distributed mode</h2>
 * With a {@link dev.redeye.spi.Store}, one store read per call on the closed path (zero with the opt-in local
 * cache while it is trusted and fresh), zero while open between re-verifications, and writes only when there
 * is something to record. Each missing store capability degrades to a best-effort fallback and logs one
 * warning per store instance (not per breaker).
 *
 * <h2>Cost</h2>
 * <ul>
 * <li>Local mode, consecutive strategy, closed and healthy: one map lookup and one volatile read before the
 * call, two counter increments after it; no lock, no allocation, no clock or ticker read (unless a
 * {@code callTimeout} is set: two ticker reads).</li>
 * <li>Distributed mode, closed: one ticker read and one store read per call; the consecutive and leaky strategies
 * write only when the read showed failures to clear (or leak) or the call failed; the error-rate strategy writes
 * every outcome. With the opt-in {@linkplain dev.redeye.CircuitBreakerBuilder#localCache(java.time.Duration) local
 * cache}, zero reads while the cached
 * closed state is trusted and younger than its stale tolerance, then one read per operation however many threads
 * call (single-flight: the callers that arrive meanwhile wait for it). With
 * {@linkplain dev.redeye.CircuitBreakerBuilder#recordBatching(java.time.Duration) write batching}, an outcome is
 * held in memory (no allocation) and written with the others of its operation at most {@code maxDelay} later, at
 * once when a failure would open the breaker: at most one write per operation and {@code maxDelay}.</li>
 * <li>Open: rejections come from a per-operation cache with zero store reads, re-verified with one read at
 * most once per {@code openCacheRefresh} and always re-read at this instance's own trial-eligibility instant
 * (the cache can make a rejection late, never an allow early). A rejection builds one exception (without a
 * stack trace by default), thrown once; {@link dev.redeye.CircuitBreaker#executeOrElse executeOrElse} and
 * {@link dev.redeye.CircuitBreaker#executeOrElseGet executeOrElseGet} build none, so that in local mode they
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
 * {@link dev.redeye.CircuitBreakerBuilder#recordFailure recordFailure} (default: every exception and error counts);
 * an exception that does not
 * count is recorded as a success. Interrupts and cancellation are not outcomes of the dependency and are never
 * recorded: a call that threw {@link java.lang.InterruptedException}, {@link
 * java.util.concurrent.CancellationException},
 * {@link java.nio.channels.ClosedByInterruptException} or an {@link java.io.InterruptedIOException} (other than
 * {@link java.net.SocketTimeoutException}), or an exception caused by one of them (the cause chain is searched: a
 * client's {@code RuntimeException} around an {@code InterruptedException}, an {@code UncheckedIOException} around
 * an {@code InterruptedIOException}, a {@code CompletionException} around a cancellation), or that threw anything
 * while its thread was interrupted, counts in {@link dev.redeye.Metrics#calls()} only; a trial ended that way gives
 * its claim
 * back and leaves the state as it is. The thread's interrupt status is restored: still set when the call left it
 * set, and set again when the call threw one of the exceptions that report an interrupt (or one caused by it). A
 * returned result counts as a failure when {@link dev.redeye.CircuitBreakerBuilder#recordResult recordResult} says
 * so; it is still returned.
 *
 * <h2>Store errors</h2>
 * Anything the store throws but a {@link java.lang.VirtualMachineError}, not only {@link
 * dev.redeye.api.StoreException} (a driver's own
 * exception, a checked exception thrown sneakily, a closed pool, a {@code NullPointerException}, a
 * {@code NoClassDefFoundError} of a driver class), is a store error handled under the {@link
 * dev.redeye.StoreErrorPolicy};
 * it never reaches the caller as if the call had failed, and never replaces the call's own exception. A trial
 * claim that throws is a store error too: REJECT rejects with {@link dev.redeye.api.StoreUnavailableException}
 * without running
 * the call; ALLOW and LOCAL fall back to a per-instance claim (at most {@code halfOpenPermits} trials per
 * instance), never letting every caller through. Writes after a call are best-effort: a store error there is
 * logged (at most every 10 s), counted in {@link dev.redeye.Metrics#storeErrors()}, reported to {@code
 * onStoreError} and
 * never thrown.
 *
 * <h2>Time</h2>
 * Two kinds of time. What is <em>stored</em>, and so read by other instances ({@code openedAt},
 * {@code lastFailureAt}, the {@code now} every store operation is given), is wall-clock time from the
 * configured {@link java.time.Clock} ({@link dev.redeye.CircuitBreakerBuilder#clock}). What is <em>local</em> to
 * this instance (how old a
 * local-cache entry is, when an open view is re-verified, the hold after a lost claim, the backoff after a
 * trial failure it could not write, permit leases, whether a call took longer than {@code callTimeout},
 * observer timings) is a monotonic duration on the {@link dev.redeye.Ticker} ({@link
 * dev.redeye.CircuitBreakerBuilder#ticker}, {@link java.lang.System#nanoTime()}
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
 * {@code record*}): an empty name, one longer than {@value dev.redeye.api.OperationNames#MAX_LENGTH} UTF-16 code
 * units, one
 * with an unpaired surrogate or with U+0000 is an {@link java.lang.IllegalArgumentException} to the caller, never a
 * store error ({@link dev.redeye.api.OperationNames#requireValid}); a name already known costs nothing more.
 * {@code localState}, {@code localStatus} and {@code metrics} never create an operation and answer "none" for
 * any name they do not hold. With {@link dev.redeye.CircuitBreakerBuilder#maxOperations(int)}, the breaker
 * keeps at most that many: past it, the least recently used operations are evicted (approximately; never one
 * with a trial running), losing this instance's metrics and cached views of them; in local mode an evicted
 * operation's stored state goes too, unless it is open (an open breaker is never closed by an eviction).
 *
 * <h2>Ecosystem</h2>
 * {@link dev.redeye.Permit} ({@code tryAcquire}) for code that runs the call itself, {@link dev.redeye.PermitSlot}
 * ({@code newPermitSlot}: one permit at a time, refilled, nothing allocated) for adapters of interfaces that hand
 * their callers no permit (the Resilience4j adapter), decorators on the breaker,
 * {@link dev.redeye.CircuitBreakerObserver} for metrics (the SPI {@code redeye-micrometer} implements) and the
 * builder's listeners ({@code onCallRejected}, {@code onIgnoredError}, {@code onFleetStateChange}).
 *
 * <p>Everything not public here is an implementation detail, split by job behind the
 * {@link dev.redeye.CircuitBreaker} façade, wired together by {@code BreakerParts}: running calls ({@code Calls}),
 * admission ({@code Gate}, with local mode's open views and the
 * {@code EngineTimer} that marks them due), rejections ({@code Rejections}), the half-open protocol ({@code Trials}),
 * outcome recording ({@code OutcomeRecorder}), the open-state view and local cache ({@code StateViews}) with its
 * single-flight refresh ({@code CacheRefresh}), the
 * feed ({@code FeedHandler}), the bounded operation registry ({@code Operations}), capabilities and their
 * fallbacks ({@code StoreAccess}), the manual and read-only API ({@code ManualControl}), the LOCAL store-error
 * decorator ({@code DegradingStore}), call timeouts
 * ({@code CallTimer}, {@code AsyncCall}) and the store that connects on first use behind
 * {@link dev.redeye.Stores#open(String)} ({@code ConnectingStore}).
 */
package dev.redeye;
