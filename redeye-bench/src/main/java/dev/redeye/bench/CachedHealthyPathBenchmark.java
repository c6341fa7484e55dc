package dev.redeye.bench;

import dev.redeye.CheckedSupplier;
import dev.redeye.CircuitBreaker;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * The per-call cost of a closed, healthy breaker in distributed mode with the local cache on
 * ({@code localCache(100 ms)}, as {@link CacheConfig#LOCAL_CACHE}), on a real Redis and a real PostgreSQL,
 * next to local mode ({@link Backend#LOCAL}, no store) as the baseline: one trivial call, on one thread and on
 * two threads sharing one breaker and one operation. The cache is refreshed by one store read per 100 ms
 * window (single-flight, whatever the thread count), so these figures include that read amortized over the
 * window's calls; everything else is the in-process cached path. The targets: at most 2x local mode, and
 * 0 B/op. {@link Backend#LOCAL_PLUS_CLOCK_READ} shows what the one clock read of the cached path costs.
 *
 * <p>Run it (Redis and PostgreSQL from {@code REDEYE_REDIS_URL} / {@code REDEYE_POSTGRES_URL}, as
 * {@link DistributedBench} reads them; {@code scripts/services.sh} sets them; {@code -prof gc} adds
 * {@code gc.alloc.rate.norm}):
 * <pre>
 * mvn -B -q package -pl redeye-bench -am -DskipTests
 * java -jar redeye-bench/target/benchmarks.jar CachedHealthyPathBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc
 * </pre>
 * The run writes under a key prefix and a schema unique to it ({@link StoreFixture}) and removes them at the
 * end of each trial.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CachedHealthyPathBenchmark {

    /** Where the breaker's state lives. */
    public enum Backend {
        /** Local mode (no store, no cache): the baseline the targets are stated against. */
        LOCAL,
        /**
         * Local mode with a call that reads the system clock once ({@code Clock.systemUTC().millis()}): not a
         * target, a decomposition. The cached path does what local mode does minus one map lookup, plus one
         * clock read (the age check that keeps an entry from being served past {@code staleTolerance}), so
         * this row shows what that clock read costs on the machine of the run.
         */
        LOCAL_PLUS_CLOCK_READ,
        /** A Redis store ({@code REDEYE_REDIS_URL}) with {@code localCache(100 ms)}. */
        REDIS,
        /** A PostgreSQL store over a HikariCP pool ({@code REDEYE_POSTGRES_URL}) with {@code localCache(100 ms)}. */
        POSTGRES
    }

    /** The backend; named {@code type} like the other healthy-path benchmark's parameter, for {@link JmhTables}. */
    @Param({"LOCAL", "LOCAL_PLUS_CLOCK_READ", "REDIS", "POSTGRES"})
    public Backend type;

    private static final Clock SYSTEM_CLOCK = Clock.systemUTC();

    private StoreFixture fixture;
    private CircuitBreaker breaker;
    private CheckedSupplier<Object, RuntimeException> call;

    /**
     * Builds one closed breaker shared by every benchmark thread and fills its cache with one call.
     *
     * @throws IllegalStateException if the breaker's local cache did not come up (the store has no feed)
     */
    @Setup(Level.Trial)
    public void setUp() {
        call = Load.HEALTHY;
        if (type == Backend.LOCAL || type == Backend.LOCAL_PLUS_CLOCK_READ) {
            breaker = CircuitBreaker.ofDefaults();
            if (type == Backend.LOCAL_PLUS_CLOCK_READ) {
                // the result depends on the read, so it is not dead code; no shared field is written
                call = () -> SYSTEM_CLOCK.millis() != 0 ? Load.OK : null;
            }
        } else {
            BenchEnv env = BenchEnv.parse(new String[0]);
            fixture = env.fixture(type == Backend.REDIS ? "redis" : "postgres", true);
            breaker = CacheConfig.LOCAL_CACHE.apply(CircuitBreaker.builder().store(fixture.open())).build();
            if (!breaker.isLocalCacheActive()) {
                throw new IllegalStateException("the local cache is not active on " + type);
            }
        }
        breaker.execute(BreakerType.OPERATION, call);
    }

    /** Closes the breaker and removes what the run wrote to the store. */
    @TearDown(Level.Trial)
    public void tearDown() {
        breaker.close();
        if (fixture != null) {
            fixture.close();
        }
    }

    /** One thread calling through the breaker. */
    @Benchmark
    @Threads(1)
    public Object oneThread() {
        return breaker.execute(BreakerType.OPERATION, call);
    }

    /** Two threads calling through the same breaker and operation. */
    @Benchmark
    @Threads(2)
    public Object twoThreads() {
        return breaker.execute(BreakerType.OPERATION, call);
    }
}
