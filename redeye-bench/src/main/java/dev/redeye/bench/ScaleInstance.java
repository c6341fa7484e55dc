package dev.redeye.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.redeye.CircuitBreaker;
import dev.redeye.CountingStore;
import dev.redeye.OpenMode;
import dev.redeye.Stores;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreOperation;
import dev.redeye.store.dynamodb.DynamoDbStore;
import dev.redeye.store.postgres.PostgresStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.postgresql.Driver;
import org.postgresql.PGProperty;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A JVM's share of the {@link ScaleBench} fleet: breaker instances, each over its own store client wrapped in a
 * {@link CountingStore}, each subscribed to the store's feed (local cache on), driven line by line on standard
 * input; each command is answered by one line on standard output. {@link ScaleBench} starts it in a JVM of its
 * own, so that a fleet of 1,000 clients spreads over a few processes as it would over pods.
 *
 * <p>Where the clients come from ({@link Clients}): either each one from the store URI
 * ({@code Stores.open(uri)}, strict; for PostgreSQL a pool of its own per client), or, with
 * {@code --postgres-pool}, each a {@code PostgresStore} of its own with a polled feed, every one of this JVM's
 * stores over one HikariCP pool of a fixed size ({@link SharedPool}: one pool per process, the deployment
 * docs/CAPACITY.md names for large PostgreSQL fleets).
 *
 * <p>Each instance holds two breakers over its one store client, both {@code localCache(100 ms)}:
 * {@value #READ_OP} under the consecutive strategy (a healthy call writes nothing: the read path), and
 * {@value #WRITE_OP} under the error-rate strategy (every outcome is written: the write path). The first also
 * listens to the fleet's transitions ({@code onFleetStateChange}) and notes, per instance, the wall-clock time
 * (epoch microseconds: the fleet shares this machine's clock) at which it first saw each version of
 * {@value #FANOUT_OP}.
 *
 * <pre>
 * java -cp benchmarks.jar dev.redeye.bench.ScaleInstance STORE_URI
 * java -cp benchmarks.jar dev.redeye.bench.ScaleInstance --postgres-pool SIZE SCHEMA JDBC_URL
 *   open K              K more instances -> "total=T opened=O failed=F failedAttempts=A ms=M subscribed=S error=..."
 *                       (the error, last on the line, may hold spaces)
 *   load OP RATE MILLIS calls of OP (read or write) at RATE calls/s over this JVM's instances, round robin
 *                       -> "calls=C late=L reads=R writes=W subscribes=S storeErrors=E rejected=J p50=.. p99=.. (µs) ms=M"
 *   probe OP COUNT      COUNT calls of OP one after the other on the first instance -> "p50=.. p99=.." (µs)
 *   seen VERSION MILLIS waits up to MILLIS until every instance saw VERSION of the fan-out operation
 *                       -> "got=G of=K times=t1,t2,..." (epoch µs of each instance's first sighting)
 *   quit                closes every breaker and store client (then the shared pool), then exits
 * </pre>
 * It prints {@code ready} at start (or {@code error TYPE: MESSAGE} and exits when its arguments are wrong or the
 * shared pool cannot connect) and {@code error TYPE: MESSAGE} for a command that failed.
 */
public final class ScaleInstance {
    /** The operation of the read path (consecutive strategy, healthy calls). */
    static final String READ_OP = "scale-read";
    /** The operation of the write path (error-rate strategy: every outcome written). */
    static final String WRITE_OP = "scale-write";
    /** The operation whose transitions the fan-out measure times. */
    static final String FANOUT_OP = "scale-fanout";
    /** The pseudo-operation of {@code load} that makes no calls. */
    static final String IDLE = "idle";
    /** Threads that run one JVM's share of the call rate. */
    static final int CALLERS = 8;
    /** A call that starts later than this after its slot counts as late (the fleet could not keep the rate). */
    static final long LATE_MICROS = 100_000;
    /** Threads that open store clients at once. */
    static final int OPENERS = 8;
    /** Attempts to open one store client. */
    static final int OPEN_ATTEMPTS = 3;
    /** The pause between two attempts to open a client. */
    static final long RETRY_MILLIS = 1_000;

    /** The shared pool's feed interval: the default {@code pollIntervalMillis} of a {@code feed=poll} URI. */
    static final Duration POLL_INTERVAL = Duration.ofMillis(250);
    /**
     * The shared pool's bounds, those a store opened from a URI gives its own pool: how long a call waits for a
     * connection, and how long validating an idle one may take.
     */
    static final long POOL_TIMEOUT_MILLIS = 1_000;
    /** The driver's client-side bounds a store opened from a URI sets unless its URI sets them. */
    private static final Map<String, String> DRIVER_DEFAULTS = Map.of("socketTimeout", "2", "connectTimeout", "2",
            "loginTimeout", "2", "tcpKeepAlive", "true");

    private final Clients clients;
    private final List<Instance> instances = new ArrayList<>();
    private final AtomicLong storeErrors = new AtomicLong();
    private final AtomicLong retries = new AtomicLong();

    /** One instance of the fleet: a store client, its two breakers, and what it saw on the feed. */
    private final class Instance implements AutoCloseable {
        /** The client itself, for what only it counts (DynamoDB's requests and capacity units, feed polls included). */
        final Store client;
        final CountingStore store;
        final CircuitBreaker read;
        final CircuitBreaker write;
        /** Fan-out version to the epoch µs it was first seen here. */
        final Map<Long, Long> seen = new ConcurrentHashMap<>();

        Instance(Store client) {
            this.client = client;
            store = new CountingStore(client);
            CircuitBreaker r = null;
            try {
                r = CircuitBreaker.builder().store(store).closeStore(false).localCache(Duration.ofMillis(100))
                        .onStoreError((op, e) -> storeErrors.incrementAndGet())
                        .onFleetStateChange(this::onEvent).build();
                write = CircuitBreaker.builder().store(store).closeStore(false).localCache(Duration.ofMillis(100))
                        .strategy(Strategy.ERROR_RATE).onStoreError((op, e) -> storeErrors.incrementAndGet()).build();
                read = r;
            } catch (RuntimeException e) {
                if (r != null) {
                    r.close();
                }
                store.close();
                throw e;
            }
        }

        private void onEvent(TransitionEvent e) {
            if (e.operation().equals(FANOUT_OP)) {
                seen.putIfAbsent(e.state().version(), micros());
            }
        }

        @Override
        public void close() {
            try {
                read.close();
                write.close();
            } finally {
                store.close();
            }
        }
    }

    private ScaleInstance(Clients clients) {
        this.clients = clients;
    }

    /** Where the instances' store clients come from; closed once every instance is. */
    interface Clients extends AutoCloseable {
        /**
         * A new store client, connected (its schema checked) before it returns.
         *
         * @throws dev.redeye.api.StoreException if the store cannot be reached
         */
        Store open();

        @Override
        void close();
    }

    /**
     * The clients of a command line: {@code STORE_URI} (each client {@code Stores.open(uri)}, strict) or
     * {@code --postgres-pool SIZE SCHEMA JDBC_URL} (a {@link SharedPool}, which connects at once).
     *
     * @throws IllegalArgumentException if the arguments are neither
     * @throws com.zaxxer.hikari.pool.HikariPool.PoolInitializationException if the shared pool cannot connect
     */
    static Clients clients(String... args) {
        if (args.length == 1 && !args[0].startsWith("--")) {
            String uri = args[0];
            return new Clients() {
                @Override
                public Store open() {
                    return Stores.open(uri, OpenMode.STRICT);
                }

                @Override
                public void close() {
                    // each client closes its own connections
                }
            };
        }
        if (args.length == 4 && args[0].equals("--postgres-pool")) {
            int size;
            try {
                size = Integer.parseInt(args[1]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--postgres-pool: SIZE must be a number, was '" + args[1] + "'");
            }
            return new SharedPool(size, args[2], args[3]);
        }
        throw new IllegalArgumentException("usage: ScaleInstance STORE_URI | ScaleInstance --postgres-pool SIZE SCHEMA"
                + " JDBC_URL (got " + args.length + " arguments)");
    }

    /** The command line of a {@link SharedPool} child, as {@link #clients(String...)} reads it. */
    static List<String> sharedPoolArgs(int size, String schema, String jdbcUrl) {
        return List.of("--postgres-pool", Integer.toString(size), schema, jdbcUrl);
    }

    /**
     * One HikariCP pool of a fixed size for every store client of this JVM, each client a {@code PostgresStore}
     * of its own ({@code PostgresStore.builder(pool)}, the builder's defaults otherwise) with a polled feed
     * ({@link #POLL_INTERVAL}), which holds no connection between polls. The driver gets the JDBC URL as given
     * (its {@code ApplicationName} is what the server's count of the fleet looks for) and the client-side bounds
     * a store from a URI would get ({@code socketTimeout}, {@code connectTimeout}, {@code loginTimeout} of 2 s,
     * {@code tcpKeepAlive}) where the URL does not set them; the pool waits {@value #POOL_TIMEOUT_MILLIS} ms for
     * a connection, as a URI store's does. Closing it closes the pool, never the stores.
     */
    static final class SharedPool implements Clients {
        private final HikariDataSource pool;
        private final String schema;

        /**
         * Opens the pool, and its {@code size} connections.
         *
         * @throws IllegalArgumentException if {@code size} is below 1 or the URL is not a PostgreSQL JDBC URL
         * @throws com.zaxxer.hikari.pool.HikariPool.PoolInitializationException if the server cannot be reached
         */
        SharedPool(int size, String schema, String jdbcUrl) {
            if (size < 1) {
                throw new IllegalArgumentException("--postgres-pool: SIZE must be >= 1, was " + size);
            }
            Properties given = Driver.parseURL(jdbcUrl, null);
            if (given == null) {
                throw new IllegalArgumentException("--postgres-pool: not a jdbc:postgresql:// URL");
            }
            PGSimpleDataSource driver = new PGSimpleDataSource();
            driver.setURL(jdbcUrl);
            DRIVER_DEFAULTS.forEach((name, value) -> {
                if (!given.containsKey(name)) {
                    driver.setProperty(PGProperty.forName(name), value);
                }
            });
            HikariConfig config = new HikariConfig();
            config.setDataSource(driver);
            config.setPoolName("redeye-scale-shared");
            config.setMaximumPoolSize(size); // minimumIdle defaults to it: a fixed-size pool
            config.setConnectionTimeout(POOL_TIMEOUT_MILLIS);
            config.setValidationTimeout(POOL_TIMEOUT_MILLIS);
            this.pool = new HikariDataSource(config);
            this.schema = schema;
        }

        @Override
        public Store open() {
            return PostgresStore.builder(pool).schema(schema).pollFeed(POLL_INTERVAL).build();
        }

        @Override
        public void close() {
            pool.close();
        }
    }

    static long micros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /**
     * One instance, its client opened in at most {@value #OPEN_ATTEMPTS} attempts {@value #RETRY_MILLIS} ms
     * apart (an application's lazy {@code Stores.open} would keep retrying in the background; a strict open
     * tells the bench that it failed). Every failed attempt is counted.
     */
    private Instance openWithRetries() throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                return new Instance(clients.open());
            } catch (RuntimeException e) {
                retries.incrementAndGet();
                if (attempt == OPEN_ATTEMPTS) {
                    throw e;
                }
                Thread.sleep(RETRY_MILLIS);
            }
        }
    }

    /**
     * Opens {@code k} more instances, {@value #OPENERS} at a time; a client that fails to open in every attempt
     * is counted as failed, and its last error is reported.
     */
    String open(int k) throws InterruptedException {
        long start = System.nanoTime();
        long retriesBefore = retries.get();
        ExecutorService pool = Executors.newFixedThreadPool(OPENERS);
        List<Future<Instance>> made = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            made.add(pool.submit(this::openWithRetries));
        }
        int failed = 0;
        String firstError = "";
        for (Future<Instance> f : made) {
            try {
                instances.add(f.get());
            } catch (java.util.concurrent.ExecutionException e) {
                failed++;
                if (firstError.isEmpty()) {
                    firstError = e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage();
                }
            }
        }
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
        // the feed subscription runs in the background: give it the time a loaded machine needs
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int subscribed;
        do {
            subscribed = 0;
            for (Instance in : instances) {
                in.read.execute(READ_OP, Load.HEALTHY); // also makes the operation known before the load phase
                subscribed += in.read.isLocalCacheActive() ? 1 : 0;
            }
            if (subscribed == instances.size()) {
                break;
            }
            Thread.sleep(200);
        } while (System.nanoTime() < deadline);
        return "total=" + instances.size() + " opened=" + (k - failed) + " failed=" + failed + " failedAttempts="
                + (retries.get() - retriesBefore) + " ms=" + (System.nanoTime() - start) / 1_000_000 + " subscribed="
                + subscribed + " error=" + firstError.replace('\n', ' ');
    }

    /**
     * Calls {@code op} at {@code rate} calls/s over every instance in turn for {@code millis}; {@value #IDLE}:
     * no calls, only what the instances' clients do on their own meanwhile (feed polls).
     */
    String load(String op, double rate, long millis) throws InterruptedException {
        if (instances.isEmpty()) {
            return "calls=0 late=0 reads=0 writes=0 subscribes=0 storeErrors=0 rejected=0 p50=0 p99=0 ms=0"
                    + " dynRequests=0 dynRcuMilli=0 dynWcuMilli=0 dynLostConditions=0";
        }
        if (op.equals(IDLE)) {
            long[] before = totals();
            long errorsBefore = storeErrors.get();
            long start = System.nanoTime();
            Thread.sleep(millis);
            long elapsed = (System.nanoTime() - start) / 1_000_000;
            long[] after = totals();
            return "calls=0 late=0 reads=" + (after[0] - before[0]) + " writes=" + (after[1] - before[1])
                    + " subscribes=" + (after[2] - before[2]) + " storeErrors=" + (storeErrors.get() - errorsBefore)
                    + " rejected=0 p50=0 p99=0 ms=" + elapsed + backendUnits(before, after);
        }
        boolean writes = op.equals(WRITE_OP);
        long total = Math.max(1, Math.round(rate * millis / 1000.0));
        long[] before = totals();
        long errorsBefore = storeErrors.get();
        AtomicLong rejected = new AtomicLong();
        Latencies[] lat = new Latencies[CALLERS];
        long[] late = new long[CALLERS];
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime() + 20_000_000L;
        double intervalNanos = 1e9 / rate;
        for (int w = 0; w < CALLERS; w++) {
            int worker = w;
            lat[w] = new Latencies((int) (total / CALLERS + 2));
            Thread t = new Thread(() -> {
                for (long i = worker; i < total; i += CALLERS) {
                    long slot = start + (long) (i * intervalNanos);
                    long wait = slot - System.nanoTime();
                    if (wait > 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(wait);
                    }
                    long t0 = System.nanoTime();
                    if ((t0 - slot) / 1_000 > LATE_MICROS) {
                        late[worker]++;
                    }
                    Instance in = instances.get((int) (i % instances.size()));
                    try {
                        (writes ? in.write : in.read).execute(op, Load.HEALTHY);
                    } catch (RuntimeException e) {
                        rejected.incrementAndGet(); // the breaker never opens here: any rejection is a finding
                    }
                    lat[worker].add(System.nanoTime() - t0);
                }
            }, "scale-caller-" + w);
            threads.add(t);
            t.start();
        }
        Load.joinAll(threads);
        long elapsed = (System.nanoTime() - start) / 1_000_000;
        long[] after = totals();
        Latencies all = new Latencies((int) total + 1);
        long lateCalls = 0;
        for (int w = 0; w < CALLERS; w++) {
            lateCalls += late[w];
            all.addAll(lat[w]);
        }
        return "calls=" + all.size() + " late=" + lateCalls + " reads=" + (after[0] - before[0]) + " writes="
                + (after[1] - before[1]) + " subscribes=" + (after[2] - before[2]) + " storeErrors="
                + (storeErrors.get() - errorsBefore) + " rejected=" + rejected.get() + " p50=" + all.percentile(50) / 1_000 + " p99="
                + all.percentile(99) / 1_000 + " ms=" + elapsed + backendUnits(before, after);
    }

    private static String backendUnits(long[] before, long[] after) {
        return " dynRequests=" + (after[3] - before[3]) + " dynRcuMilli=" + (after[4] - before[4]) + " dynWcuMilli="
                + (after[5] - before[5]) + " dynLostConditions=" + (after[6] - before[6]);
    }

    /** {@code count} calls of {@code op} one after the other on the first instance: the idle reference. */
    String probe(String op, int count) {
        if (instances.isEmpty()) {
            return "p50=0 p99=0";
        }
        Instance in = instances.get(0);
        CircuitBreaker b = op.equals(WRITE_OP) ? in.write : in.read;
        Latencies lat = new Latencies(count);
        for (int i = 0; i < count; i++) {
            long t0 = System.nanoTime();
            b.execute(op, Load.HEALTHY);
            lat.add(System.nanoTime() - t0);
        }
        return "p50=" + lat.percentile(50) / 1_000 + " p99=" + lat.percentile(99) / 1_000;
    }

    /**
     * Reads, writes and subscriptions of every instance so far; then, for DynamoDB clients, their requests and
     * the read and write capacity units (thousandths) the endpoint reported, feed polls included, and their
     * conditional writes that lost their condition (another instance wrote the item first).
     */
    private long[] totals() {
        long reads = 0;
        long writes = 0;
        long subscribes = 0;
        long requests = 0;
        long rcu = 0;
        long wcu = 0;
        long lost = 0;
        for (Instance in : instances) {
            if (in.client instanceof DynamoDbStore) {
                DynamoDbStore.Usage u = ((DynamoDbStore) in.client).usage();
                requests += u.requests();
                rcu += Math.round(u.readUnits() * 1000);
                wcu += Math.round(u.writeUnits() * 1000);
                lost += u.conditionFailures();
            }
            reads += in.store.countOf(StoreOperation.GET);
            writes += in.store.countOf(StoreOperation.UPDATE) + in.store.countOf(StoreOperation.PUT)
                    + in.store.countOf(StoreOperation.DELETE) + in.store.countOf(StoreOperation.CLAIM_TRIAL)
                    + in.store.countOf(StoreOperation.RELEASE_TRIAL);
            subscribes += in.store.countOf(StoreOperation.SUBSCRIBE);
        }
        return new long[] {reads, writes, subscribes, requests, rcu, wcu, lost};
    }

    /** Waits until every instance saw {@code version} of the fan-out operation, or {@code millis} passed. */
    String seen(long version, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (true) {
            int got = 0;
            for (Instance in : instances) {
                got += in.seen.containsKey(version) ? 1 : 0;
            }
            if (got == instances.size() || System.nanoTime() > deadline) {
                StringBuilder times = new StringBuilder();
                for (Instance in : instances) {
                    Long t = in.seen.get(version);
                    if (t != null) {
                        times.append(times.length() == 0 ? "" : ",").append(t);
                    }
                }
                return "got=" + got + " of=" + instances.size() + " times=" + times;
            }
            Thread.sleep(5);
        }
    }

    /** Closes every instance, then the clients' shared resources. */
    private void closeAll() {
        ExecutorService pool = Executors.newFixedThreadPool(OPENERS);
        for (Instance in : instances) {
            pool.submit(() -> {
                try {
                    in.close();
                } catch (RuntimeException e) {
                    System.err.println("closing an instance failed: " + e);
                }
            });
        }
        pool.shutdown();
        try {
            pool.awaitTermination(2, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        instances.clear();
        clients.close();
    }

    /**
     * Serves commands until {@code quit} or the end of input, then closes everything it opened.
     *
     * @param args the store URI, or {@code --postgres-pool SIZE SCHEMA JDBC_URL}
     */
    public static void main(String[] args) throws IOException {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        Clients clients;
        try {
            clients = clients(args);
        } catch (RuntimeException e) {
            out.println("error " + e.getClass().getSimpleName() + ": "
                    + String.valueOf(e.getMessage()).replace('\n', ' '));
            System.exit(2);
            return;
        }
        ScaleInstance fleet = new ScaleInstance(clients);
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            out.println("ready");
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] w = line.trim().split(" ");
                try {
                    if (w[0].equals("quit")) {
                        break;
                    } else if (w[0].equals("open") && w.length == 2) {
                        out.println(fleet.open(Integer.parseInt(w[1])));
                    } else if (w[0].equals("load") && w.length == 4) {
                        out.println(fleet.load(w[1], Double.parseDouble(w[2]), Long.parseLong(w[3])));
                    } else if (w[0].equals("probe") && w.length == 3) {
                        out.println(fleet.probe(w[1], Integer.parseInt(w[2])));
                    } else if (w[0].equals("seen") && w.length == 3) {
                        out.println(fleet.seen(Long.parseLong(w[1]), Long.parseLong(w[2])));
                    } else {
                        out.println("error IllegalArgumentException: unknown command '" + line + "'");
                    }
                } catch (RuntimeException | InterruptedException e) {
                    out.println("error " + e.getClass().getSimpleName() + ": "
                            + String.valueOf(e.getMessage()).replace('\n', ' '));
                }
            }
        } finally {
            fleet.closeAll();
            out.println("closed");
        }
        System.exit(0);
    }
}
