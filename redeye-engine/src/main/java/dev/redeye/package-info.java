/**
 * The redeye engine: {@link dev.redeye.CircuitBreaker} with its builder and immutable
 * {@link dev.redeye.CircuitBreakerConfig}, the in-process {@link dev.redeye.InMemoryStore} that local mode runs
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
 * <h2>Time</h2>
 * Stored times ({@code openedAt}, {@code lastFailureAt}, the {@code now} given to stores) come from the
 * configured {@link java.time.Clock}; every local duration (cache age, refresh, holds, leases, the
 * {@code callTimeout} check) from the {@link dev.redeye.Ticker}, so a wall-clock step never moves a local
 * deadline; and a trial's eligibility is capped at one window after this instance saw the opening. The clock
 * model in full is under "Time" on {@link dev.redeye.CircuitBreaker}.
 *
 * <h2>Distributed mode</h2>
 * With a {@link dev.redeye.api.Store}, one store read per call on the closed path (zero with the opt-in local
 * cache while it is trusted and fresh), zero while open between re-verifications, and writes only when there
 * is something to record. Each missing store capability degrades to a best-effort fallback and logs one
 * warning per store instance (not per breaker).
 *
 * <h2>Ecosystem</h2>
 * {@link dev.redeye.Permit} ({@code tryAcquire}) for code that runs the call itself, decorators on the breaker,
 * {@link dev.redeye.CircuitBreakerObserver} for metrics (the SPI {@code redeye-micrometer} implements) and the
 * builder's listeners ({@code onCallRejected}, {@code onIgnoredError}, {@code onFleetStateChange}).
 *
 * <p>Everything not public here is an implementation detail, split by job behind the
 * {@link dev.redeye.CircuitBreaker} façade: running calls ({@code Calls}), admission ({@code Gate}, with local mode's open views and the
 * {@code EngineTimer} that marks them due), rejections ({@code Rejections}), the half-open protocol ({@code Trials}),
 * outcome recording ({@code OutcomeRecorder}), the open-state view and local cache ({@code StateViews}) with its
 * single-flight refresh ({@code CacheRefresh}), the
 * feed ({@code FeedHandler}), the bounded operation registry ({@code Operations}), capabilities and their
 * fallbacks ({@code StoreAccess}), the LOCAL store-error decorator ({@code DegradingStore}), call timeouts
 * ({@code CallTimer}, {@code AsyncCall}) and the store that connects on first use behind
 * {@link dev.redeye.Stores#open(String)} ({@code ConnectingStore}).
 */
package dev.redeye;
