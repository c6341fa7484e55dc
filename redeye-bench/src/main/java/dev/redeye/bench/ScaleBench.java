package dev.redeye.bench;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.StoreException;
import dev.redeye.spi.Store;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import redis.clients.jedis.Jedis;

/**
 * Fleet scale (issue 27): N breaker instances on one store, each with its own store client and feed
 * subscription, spread over child JVMs ({@link ScaleInstance}), and the per-key ceiling of each backend measured
 * on its own beside them.
 *
 * <p><b>Per-key ceiling.</b> {@value #CEILING_THREADS} threads hammer one key for a fixed time: the backend's own
 * smallest write ({@link StoreFixture#keyCeiling}: {@code EVALSHA} of a trivial script, {@code SELECT ... FOR
 * UPDATE; UPDATE; COMMIT} on plain JDBC, a conditional {@code UpdateItem}, a trivial entry processor), then
 * redeye's own atomic record ({@code recordFailure} under a threshold never reached, each thread with its own
 * store client). Calls/s, p50/p99 and errors.
 *
 * <p><b>Fleet.</b> Per store configuration and per fleet size N, the fleet grows to N instances (at most
 * {@value #PER_JVM} per child JVM, {@value #PER_JVM_HAZELCAST} for Hazelcast, whose clients hold dozens of
 * threads each). The configurations: Redis, DynamoDB and Hazelcast, each instance's client opened from the
 * store's URI ({@code Stores.open}, strict); PostgreSQL three times: from the URI with its {@code LISTEN} feed,
 * from the URI with {@code feed=poll} (each such client has a pool of its own), and
 * {@value #SHARED_POOL_CONFIG}: each instance still its own {@code PostgresStore} and feed subscription, built
 * with {@code PostgresStore.builder(pool)} and a polled feed every 250 ms, but the stores of a child JVM share one
 * HikariCP pool of {@value #SHARED_POOL} connections ({@link ScaleInstance.SharedPool}; the deployment
 * docs/CAPACITY.md names for large fleets), which sets the fleet's {@code application_name} as the URIs do. Then,
 * per stage:
 * <ol>
 * <li>connections: the TCP connections the child JVMs hold to the server's port (counted in {@code /proc}: the
 * client's side, every backend), and the server's own count where it has one (Redis {@code CLIENT LIST}, the
 * PostgreSQL sessions of the fleet's {@code application_name} in {@code pg_stat_activity}, the Hazelcast member's
 * connected clients; dynalite has none);</li>
 * <li>the read path: the fleet calls one operation at the fleet call rate (consecutive strategy, local cache
 * 100 ms, healthy calls), and the store operations on that hot key are counted by {@code CountingStore};</li>
 * <li>the write path: the same under the error-rate strategy, which writes every outcome; the call latency is
 * compared with the same call made by one caller while the fleet is idle, measured in a child JVM after a
 * warm-up at the smallest fleet (the reference of every larger one);</li>
 * <li>feed fan-out: one instance of this JVM forces a transition ({@code forceOpen}, then {@code reset}, in
 * turn) and every instance notes when its feed delivered it; the latency from the write's start to the last
 * instance (p50/p99 over the transitions), and over every delivery.</li>
 * </ol>
 * A stage holds when no client failed to open, every instance subscribed, no store error or rejection, no
 * delivery missing, at most 1 % of calls late on their schedule, and the write-path p50 at most 2x the idle
 * one. The next N runs only if every client of this one opened. PostgreSQL: a stage whose fleet would need
 * more connections than the server has free ({@link #postgresConnectionsNeeded}: about 3 per instance with a pool
 * each, {@value #SHARED_POOL} per child JVM with the shared pool) is skipped under {@code --quick} (the machine is
 * shared) and run otherwise (running out of connections is then the finding).
 *
 * <p>Run it (the services running; DynamoDB at {@code REDEYE_DYNAMODB_URL}; the full run takes a quiet machine
 * and tens of minutes):
 * <pre>
 * mvn -B -q package -pl redeye-bench -am -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench --sections scale \
 *     --stores redis,postgres,dynamodb,hazelcast [--quick]
 * </pre>
 * System properties {@code redeye.scale.instances} (default {@code 10,100,1000}; {@code --quick}: {@code 10,20})
 * and {@code redeye.scale.rate} (fleet calls/s; default 1000, {@code --quick} 200) change the fleet.
 */
final class ScaleBench {
    static final int CEILING_THREADS = 4;
    static final int PER_JVM = 250;
    static final int PER_JVM_HAZELCAST = 100;
    /** PostgreSQL connections a {@code --quick} run leaves free for the machine's other users. */
    static final int QUICK_PG_HEADROOM = 30;
    private static final long ANSWER_SECONDS = 600;

    private ScaleBench() {
    }

    /** The size of the one pool per child JVM of {@link #SHARED_POOL_CONFIG}. */
    static final int SHARED_POOL = 4;
    /** The name of the PostgreSQL configuration whose instances share one pool per child JVM. */
    static final String SHARED_POOL_CONFIG = "postgres feed=poll, one pool per JVM";

    /**
     * One store configuration of the fleet table.
     *
     * @param uriSuffix  added to the store URI of each instance's client
     * @param sharedPool 0: each instance opens its client from the URI; otherwise the size of the one pool per
     *                   child JVM the instances' PostgreSQL stores share ({@link ScaleInstance.SharedPool})
     */
    private record Config(String name, String store, String uriSuffix, int sharedPool) {
    }

    static String run(BenchEnv env) {
        boolean quick = env.quick();
        List<Integer> sizes = sizes(System.getProperty("redeye.scale.instances", quick ? "10,20" : "10,100,1000"));
        double rate = Double.parseDouble(System.getProperty("redeye.scale.rate", quick ? "200" : "1000"));
        StringBuilder out = new StringBuilder();
        out.append(quick ? "**--quick: a smoke run of the harness; small fleets, short phases.**\n\n" : "");
        out.append(ceilings(env));
        List<Config> configs = new ArrayList<>();
        for (String s : env.stores()) {
            if (s.equals("postgres")) {
                configs.add(new Config("postgres", s, "", 0));
                configs.add(new Config("postgres feed=poll", s, "&feed=poll", 0));
                configs.add(new Config(SHARED_POOL_CONFIG, s, "", SHARED_POOL));
            } else if (BenchEnv.REMOTE.contains(s)) {
                configs.add(new Config(s, s, "", 0));
            }
        }
        Fleet fleet = new Fleet(env, sizes, rate);
        for (Config c : configs) {
            fleet.run(c);
        }
        out.append(fleet.report());
        return out.toString();
    }

    static List<Integer> sizes(String list) {
        List<Integer> out = new ArrayList<>();
        for (String s : list.split(",")) {
            int n = Integer.parseInt(s.trim());
            if (n < 1) {
                throw new IllegalArgumentException("redeye.scale.instances: sizes must be >= 1, was " + n);
            }
            out.add(n);
        }
        return out;
    }

    // ----------------------------------------------------------------------------------------- per-key ceiling

    private static String ceilings(BenchEnv env) {
        Table t = ceilingTable();
        for (String name : env.stores()) {
            if (!BenchEnv.REMOTE.contains(name)) {
                continue;
            }
            try (StoreFixture fixture = env.fixture(name, true)) {
                ceiling(fixture, env.quick()).addRows(t);
            }
        }
        return "### Per-key ceiling\n\n" + ceilingMethod(env.quick()) + "\n\n" + t + "\n";
    }

    /** One backend's per-key ceiling: its own smallest write, then redeye's record, each on one key. */
    record Ceiling(String store, String baseline, Hammer own, Hammer redeye) {
        /** redeye's {@code recordFailure} on one key, calls/s over every thread: what a fleet's writes compare with. */
        double redeyePerSecond() {
            return redeye.perSecond();
        }

        /** Adds this ceiling's two rows to a {@link #ceilingTable()}. */
        void addRows(Table t) {
            row(t, baseline, own);
            row(t, "redeye recordFailure (the store's atomic update), a client per thread", redeye);
        }

        private void row(Table t, String what, Hammer h) {
            t.row(store, what, Table.fmt(h.perSecond(), 0), Table.micros(h.lat.percentile(50)),
                    Table.micros(h.lat.percentile(99)), h.errors);
        }
    }

    /** The table {@link Ceiling#addRows} fills. */
    static Table ceilingTable() {
        return new Table("store", "what (one key, " + CEILING_THREADS + " threads)", "calls/s", "p50 (µs)",
                "p99 (µs)", "errors");
    }

    private static long ceilingWarmMillis(boolean quick) {
        return quick ? 300 : 1_000;
    }

    private static long ceilingMillis(boolean quick) {
        return quick ? 1_000 : 5_000;
    }

    /** How the ceiling is measured, one sentence for the text above its table. */
    static String ceilingMethod(boolean quick) {
        return CEILING_THREADS + " threads on one key, " + ceilingMillis(quick) + " ms after " + ceilingWarmMillis(quick)
                + " ms of warm-up; calls/s over all threads.";
    }

    /**
     * Measures the per-key ceiling of {@code fixture}'s backend ({@value #CEILING_THREADS} threads on one key, see
     * the class comment): the backend's own smallest write ({@link StoreFixture#keyCeiling}), then redeye's
     * {@code recordFailure} with a client per thread. The clients it opens are the fixture's, closed with it.
     *
     * @throws dev.redeye.api.StoreException if the backend cannot be reached
     */
    static Ceiling ceiling(StoreFixture fixture, boolean quick) {
        long warm = ceilingWarmMillis(quick);
        long millis = ceilingMillis(quick);
        Store first = fixture.open();
        try (CircuitBreaker warmup = CircuitBreaker.builder().store(first).closeStore(false).build()) {
            warmup.recordFailure("scale-ceiling-warmup"); // creates the table, schema or map
        }
        List<StoreFixture.RoundTrip> trips = new ArrayList<>();
        Hammer own;
        try {
            for (int i = 0; i < CEILING_THREADS; i++) {
                trips.add(fixture.keyCeiling(first));
            }
            List<Runnable> bodies = new ArrayList<>();
            trips.forEach(r -> bodies.add(r::once));
            own = hammer(bodies, warm, millis);
        } finally {
            trips.forEach(StoreFixture.RoundTrip::close);
        }
        String baseline = trips.get(0).describe();
        List<CircuitBreaker> breakers = new ArrayList<>();
        try {
            List<Runnable> bodies = new ArrayList<>();
            for (int i = 0; i < CEILING_THREADS; i++) {
                CircuitBreaker b = CircuitBreaker.builder().store(i == 0 ? first : fixture.open())
                        .closeStore(false).failureThreshold(Integer.MAX_VALUE).build();
                breakers.add(b);
                bodies.add(() -> b.recordFailure("scale-ceiling"));
            }
            return new Ceiling(fixture.name(), baseline, own, hammer(bodies, warm, millis));
        } finally {
            breakers.forEach(CircuitBreaker::close);
        }
    }

    /** What the threads of a ceiling did: calls, errors, latencies (a sample of at most a million). */
    record Hammer(long calls, long errors, long nanos, Latencies lat) {
        double perSecond() {
            return calls * 1e9 / nanos;
        }
    }

    private static Hammer hammer(List<Runnable> bodies, long warmMillis, long millis) {
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong calls = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        int capacity = 1_000_000 / bodies.size();
        List<Latencies> lats = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (Runnable body : bodies) {
            Latencies lat = new Latencies(capacity);
            lats.add(lat);
            Thread th = new Thread(() -> {
                while (!stop.get()) {
                    long t0 = System.nanoTime();
                    boolean ok = true;
                    try {
                        body.run();
                    } catch (RuntimeException e) {
                        ok = false;
                    }
                    if (measuring.get()) {
                        if (ok) {
                            calls.incrementAndGet();
                            if (lat.size() < capacity) {
                                lat.add(System.nanoTime() - t0);
                            }
                        } else {
                            errors.incrementAndGet();
                        }
                    }
                }
            }, "scale-ceiling");
            threads.add(th);
            th.start();
        }
        Load.sleep(warmMillis);
        measuring.set(true);
        long start = System.nanoTime();
        Load.sleep(millis);
        measuring.set(false);
        long nanos = System.nanoTime() - start;
        stop.set(true);
        Load.joinAll(threads);
        Latencies all = new Latencies(capacity * bodies.size() + 1);
        lats.forEach(all::addAll);
        if (all.size() == 0) {
            all.add(0);
        }
        return new Hammer(calls.get(), errors.get(), nanos, all);
    }

    // ------------------------------------------------------------------------------------------------- fleet

    /** The fleet stages of every store configuration, and their tables. */
    private static final class Fleet {
        private final BenchEnv env;
        private final List<Integer> sizes;
        private final double rate;
        private final long phaseMillis;
        private final long warmMillis;
        private final int transitions;
        private final Table connections = new Table("store", "N", "JVMs", "opened", "failed to open (failed attempts)",
                "subscribed", "connections (client side, /proc)", "connections (server's count)", "opening (s)");
        private final Table load = new Table("store", "N", "path", "fleet calls/s (target)", "store reads/s",
                "store writes/s", "DynamoDB requests / RCU / WCU / lost conditions per s (feed polls included)", "call p50 / p99 (µs)", "one caller, fleet idle: p50 / p99 (µs)", "late calls", "store errors",
                "rejected");
        private final Table fanout = new Table("store", "N", "transitions", "to the last instance p50 / p99 (ms)",
                "every delivery p50 / p99 (ms)", "missing deliveries");
        private final Table verdicts = new Table("store", "N", "holds", "why not");
        private final List<String> notes = new ArrayList<>();

        Fleet(BenchEnv env, List<Integer> sizes, double rate) {
            this.env = env;
            this.sizes = sizes;
            this.rate = rate;
            this.phaseMillis = env.quick() ? 1_000 : 5_000;
            this.warmMillis = env.quick() ? 500 : 3_000;
            this.transitions = env.quick() ? 3 : 20;
        }

        void run(Config c) {
            String app = "redeye-scale-" + StoreFixture.RUN_ID;
            List<Child> children = new ArrayList<>();
            try (StoreFixture fixture = env.fixture(c.store(), false)) {
                String uri = fixture.uri() + (c.store().equals("postgres") ? "&ApplicationName=" + app : "")
                        + c.uriSuffix();
                // the shared pool's stores use the URI stores' schema, and the same application name
                List<String> childArgs = c.sharedPool() > 0 ? ScaleInstance.sharedPoolArgs(c.sharedPool(),
                        StoreFixture.postgresSchema(false), withParameter(env.postgresUrl(), "ApplicationName=" + app))
                        : List.of(uri);
                int port = port(fixture.uri());
                try (CircuitBreaker writer = CircuitBreaker.builder().store(fixture.open()).build()) {
                    writer.reset(ScaleInstance.FANOUT_OP);
                    int perJvm = c.store().equals("hazelcast") ? PER_JVM_HAZELCAST : PER_JVM;
                    int total = 0;
                    long[] idle = null; // the write path's p50 and p99 (µs), one caller, at the smallest fleet
                    for (int n : sizes) {
                        String skip = skip(c, n, total);
                        if (skip != null) {
                            verdicts.row(c.name(), n, "not run", skip);
                            break;
                        }
                        long open0 = System.nanoTime();
                        int failed = grow(children, childArgs, c, n, perJvm);
                        double openSeconds = (System.nanoTime() - open0) / 1e9;
                        total = n;
                        idle = stage(c, n, fixture, app, port, children, writer, failed, openSeconds, idle);
                        if (failed > 0) {
                            notes.add("- " + c.name() + ": " + failed + " of " + n + " clients failed to open ("
                                    + firstError(children) + "); larger fleets not run");
                            break;
                        }
                    }
                } finally {
                    // before the fixture removes the data: a child's polled feed would poll a dropped table
                    for (Child ch : children) {
                        ch.close();
                    }
                }
            } catch (RuntimeException e) {
                notes.add("- " + c.name() + ": the run failed: " + e);
            }
        }

        /** Why stage {@code n} is not run, or null. */
        private String skip(Config c, int n, int current) {
            if (!c.store().equals("postgres")) {
                return null;
            }
            long[] pg = postgresConnections(null);
            long free = pg[1] - pg[0] - 3; // superuser_reserved_connections default
            long need = postgresConnectionsNeeded(c.sharedPool(), n, current);
            if (env.quick() && need > free - QUICK_PG_HEADROOM) {
                return "--quick on a shared machine: " + n + " instances need about " + need + " more connections,"
                        + " the server has " + free + " free of max_connections " + pg[1] + " and --quick leaves "
                        + QUICK_PG_HEADROOM + " to the other users";
            }
            return null;
        }

        /** Grows the fleet to {@code n} instances; returns how many clients failed to open. */
        private int grow(List<Child> children, List<String> childArgs, Config c, int n, int perJvm) {
            int have = 0;
            for (Child ch : children) {
                have += ch.instances;
            }
            int failed = 0;
            Map<Child, Integer> plan = new HashMap<>();
            int missing = n - have;
            for (Child ch : children) {
                int add = Math.min(missing, perJvm - ch.instances);
                if (add > 0) {
                    plan.put(ch, add);
                    missing -= add;
                }
            }
            while (missing > 0) {
                Child ch = new Child(childArgs, c.name().replaceAll("[^A-Za-z0-9=]+", "-") + "-" + children.size(),
                        c.store().equals("hazelcast") ? "-Xmx1536m" : "-Xmx768m");
                children.add(ch);
                int add = Math.min(missing, perJvm);
                plan.put(ch, add);
                missing -= add;
            }
            for (Map.Entry<Child, Integer> e : plan.entrySet()) {
                e.getKey().send("open " + e.getValue());
            }
            for (Map.Entry<Child, Integer> e : plan.entrySet()) {
                Map<String, String> r = e.getKey().answer();
                e.getKey().instances = Integer.parseInt(r.get("total"));
                e.getKey().subscribed = Integer.parseInt(r.get("subscribed"));
                int f = Integer.parseInt(r.get("failed"));
                failed += f;
                e.getKey().failedAttempts += Integer.parseInt(r.get("failedAttempts"));
                if (f > 0 && e.getKey().firstError == null) {
                    e.getKey().firstError = r.get("error");
                }
            }
            return failed;
        }

        private static String firstError(List<Child> children) {
            for (Child ch : children) {
                if (ch.firstError != null) {
                    return ch.firstError;
                }
            }
            return "no error reported";
        }

        /** Measures one fleet size; returns whether it held. */
        private long[] stage(Config c, int n, StoreFixture fixture, String app, int port, List<Child> children,
                CircuitBreaker writer, int failed, double openSeconds, long[] reference) {
            List<String> why = new ArrayList<>();
            int have = 0;
            int subscribed = 0;
            int failedAttempts = 0;
            List<Long> pids = new ArrayList<>();
            for (Child ch : children) {
                have += ch.instances;
                subscribed += ch.subscribed;
                failedAttempts += ch.failedAttempts;
                pids.add(ch.process.pid());
            }
            connections.row(c.name(), n, children.size(), have, failed + " (" + failedAttempts + ")", subscribed,
                    ClientSockets.established(pids, port), serverCount(c, fixture, app),
                    Table.fmt(openSeconds, 1));
            if (failed > 0) {
                why.add(failed + " clients failed to open");
            }
            if (subscribed < have) {
                why.add((have - subscribed) + " instances without a feed subscription");
            }
            // warm-up: the children's JIT, and every instance's cache and connections
            for (String op : List.of(ScaleInstance.READ_OP, ScaleInstance.WRITE_OP)) {
                for (Child ch : children) {
                    ch.send("load " + op + " " + rate * ch.instances / have + " " + warmMillis);
                }
                children.forEach(Child::answer);
            }
            children.get(0).send("probe " + ScaleInstance.WRITE_OP + " " + (env.quick() ? 100 : 1_000));
            Map<String, String> probe = children.get(0).answer();
            long[] idle = reference != null ? reference
                    : new long[] {Long.parseLong(probe.get("p50")), Long.parseLong(probe.get("p99"))};
            for (String op : List.of(ScaleInstance.IDLE, ScaleInstance.READ_OP, ScaleInstance.WRITE_OP)) {
                long[] sum = new long[11];
                Latencies lat = new Latencies(children.size() * 2 + 1);
                long p50 = 0;
                long p99 = 0;
                for (Child ch : children) {
                    ch.send("load " + op + " " + rate * ch.instances / have + " " + phaseMillis);
                }
                for (Child ch : children) {
                    Map<String, String> r = ch.answer();
                    String[] keys = {"calls", "late", "reads", "writes", "storeErrors", "rejected", "ms",
                        "dynRequests", "dynRcuMilli", "dynWcuMilli", "dynLostConditions"};
                    for (int i = 0; i < keys.length; i++) {
                        sum[i] = i == 6 ? Math.max(sum[i], Long.parseLong(r.get(keys[i])))
                                : sum[i] + Long.parseLong(r.get(keys[i]));
                    }
                    // the fleet's percentiles: the largest of the children's (each carries an equal share)
                    p50 = Math.max(p50, Long.parseLong(r.get("p50")));
                    p99 = Math.max(p99, Long.parseLong(r.get("p99")));
                }
                double seconds = sum[6] / 1000.0;
                boolean writes = op.equals(ScaleInstance.WRITE_OP);
                boolean idlePhase = op.equals(ScaleInstance.IDLE);
                String units = c.store().equals("dynamodb") ? Table.fmt(sum[7] / seconds, 1) + " / "
                        + Table.fmt(sum[8] / 1000.0 / seconds, 1) + " / " + Table.fmt(sum[9] / 1000.0 / seconds, 1) + " / "
                        + Table.fmt(sum[10] / seconds, 1) : "-";
                load.row(c.name(), n, writes ? "write (error rate)" : idlePhase ? "no calls (feed only)"
                        : "read (consecutive, local cache)",
                        idlePhase ? "0 (0)" : Table.fmt(sum[0] / seconds, 0) + " (" + Table.fmt(rate, 0) + ")",
                        Table.fmt(sum[2] / seconds, 1), Table.fmt(sum[3] / seconds, 1), units,
                        idlePhase ? "-" : p50 + " / " + p99,
                        writes ? probe.get("p50") + " / " + probe.get("p99") : "-", sum[1],
                        sum[4], sum[5]);
                if (sum[4] > 0) {
                    why.add(sum[4] + " store errors (" + op + ")");
                }
                if (sum[5] > 0) {
                    why.add(sum[5] + " rejected calls (" + op + ")");
                }
                if (sum[1] > sum[0] / 100) {
                    why.add(sum[1] + " of " + sum[0] + " calls late (" + op + ")");
                }
                if (writes && p50 > 2 * idle[0]) {
                    why.add("write p50 " + p50 + " µs > 2x the idle " + idle[0] + " µs");
                }
            }
            long missing = fanout(c, n, children, writer, have);
            if (missing > 0) {
                why.add(missing + " feed deliveries missing");
            }
            verdicts.row(c.name(), n, why.isEmpty() ? "yes" : "**no**", why.isEmpty() ? "-" : String.join("; ", why));
            return idle;
        }

        /** Forces transitions and times their delivery; returns the deliveries missing after the wait. */
        private long fanout(Config c, int n, List<Child> children, CircuitBreaker writer, int have) {
            long waitMillis = env.quick() ? 5_000 : 15_000;
            Latencies last = new Latencies(transitions);
            Latencies every = new Latencies(transitions * have + 1);
            long missing = 0;
            for (int i = 0; i < transitions; i++) {
                Load.sleep(200);
                long t0 = ScaleInstance.micros();
                if (i % 2 == 0) {
                    writer.forceOpen(ScaleInstance.FANOUT_OP);
                } else {
                    writer.reset(ScaleInstance.FANOUT_OP);
                }
                long version = writer.state(ScaleInstance.FANOUT_OP).version();
                for (Child ch : children) {
                    ch.send("seen " + version + " " + waitMillis);
                }
                long max = -1;
                for (Child ch : children) {
                    Map<String, String> r = ch.answer();
                    missing += Long.parseLong(r.get("of")) - Long.parseLong(r.get("got"));
                    String times = r.get("times");
                    if (times != null && !times.isEmpty()) {
                        for (String s : times.split(",")) {
                            long d = Long.parseLong(s) - t0;
                            every.add(Math.max(0, d) * 1_000);
                            max = Math.max(max, d);
                        }
                    }
                }
                if (max >= 0) {
                    last.add(max * 1_000);
                }
            }
            writer.reset(ScaleInstance.FANOUT_OP);
            fanout.row(c.name(), n, transitions, last.size() == 0 ? "-" : ms(last.percentile(50)) + " / "
                    + ms(last.percentile(99)), every.size() == 0 ? "-" : ms(every.percentile(50)) + " / "
                    + ms(every.percentile(99)), missing);
            return missing;
        }

        private static String ms(long nanos) {
            return Table.fmt(nanos / 1e6, 1);
        }

        /** The server's own count of the fleet's connections. */
        private String serverCount(Config c, StoreFixture fixture, String app) {
            switch (c.store()) {
                case "redis":
                    try (Jedis jedis = new Jedis(URI.create(env.redisUrl()))) {
                        String[] lines = jedis.clientList().split("\n");
                        return "CLIENT LIST: " + lines.length + " (every client of the server)";
                    }
                case "postgres":
                    long[] pg = postgresConnections(app);
                    return "pg_stat_activity: " + pg[2] + " of the fleet; " + pg[0] + " in all, max_connections "
                            + pg[1];
                case "hazelcast":
                    long clients = fixture.serverClients();
                    return clients < 0 ? "not known (a member outside this JVM)" : "member's clients: " + clients;
                default:
                    return "not observable (dynalite has no such view)";
            }
        }

        /** {total sessions, max_connections, sessions of application {@code app} (0 if null)}. */
        private long[] postgresConnections(String app) {
            try (Connection conn = DriverManager.getConnection(env.postgresUrl());
                    PreparedStatement ps = conn.prepareStatement("SELECT count(*), current_setting('max_connections')"
                            + "::bigint, count(*) FILTER (WHERE application_name = ?) FROM pg_stat_activity")) {
                ps.setString(1, app == null ? "" : app);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
                }
            } catch (SQLException e) {
                throw new StoreException("pg_stat_activity: " + e.getMessage(), e);
            }
        }

        String report() {
            StringBuilder out = new StringBuilder();
            out.append("### Fleet\n\nEach instance: its own store client (`Stores.open`, strict) and feed subscription"
                    + " (local cache 100 ms); `").append(SHARED_POOL_CONFIG).append("`: each instance its own"
                    + " `PostgresStore` (`builder(pool)`, polled feed every ")
                    .append(ScaleInstance.POLL_INTERVAL.toMillis()).append(" ms), the stores of a child JVM sharing one HikariCP pool of ").append(SHARED_POOL)
                    .append(" connections. At most ").append(PER_JVM).append(" instances per child JVM (Hazelcast ")
                    .append(PER_JVM_HAZELCAST).append("). Phases of ").append(phaseMillis).append(" ms at ")
                    .append(Table.fmt(rate, 0)).append(" fleet calls/s on one operation, round robin over the"
                    + " instances; ").append(transitions).append(" forced transitions for the fan-out.\n\n");
            out.append("Connections:\n\n").append(connections).append('\n');
            out.append("Store load on the hot key (counted by `CountingStore` in every instance; \"late\": a call"
                    + " started over 100 ms after its slot):\n\n").append(load).append('\n');
            out.append("Feed fan-out, from the start of the writing call to the instance's listener:\n\n")
                    .append(fanout).append('\n');
            out.append("Where it holds (no failed open, every instance subscribed, no store error or rejection,"
                    + " no missing delivery, at most 1 % late calls, write p50 at most 2x idle):\n\n")
                    .append(verdicts).append('\n');
            notes.forEach(n -> out.append(n).append('\n'));
            return out.toString();
        }
    }

    /**
     * The PostgreSQL connections a fleet stage from {@code current} to {@code n} instances adds, about, with a
     * margin of 5: 3 per instance where each opens its own pool (measured: 2 to 2.6, the feed's, the pool's idle
     * one, a second one under concurrent calls), or the shared pool of each child JVM the stage starts
     * ({@value #PER_JVM} instances per JVM).
     *
     * @param sharedPool 0, or the size of the one pool per child JVM
     */
    static long postgresConnectionsNeeded(int sharedPool, int n, int current) {
        if (sharedPool == 0) {
            return 3L * (n - current) + 5;
        }
        return (long) sharedPool * (jvms(n) - jvms(current)) + 5;
    }

    /** The child JVMs a fleet of {@code n} PostgreSQL instances spreads over. */
    private static int jvms(int n) {
        return (n + PER_JVM - 1) / PER_JVM;
    }

    /** {@code url} with one more query parameter ({@code name=value}). */
    static String withParameter(String url, String parameter) {
        return url + (url.indexOf('?') >= 0 ? "&" : "?") + parameter;
    }

    /** The server port of a store URI (Redis, PostgreSQL, Hazelcast), or the DynamoDB endpoint's. */
    static int port(String uri) {
        int e = uri.indexOf("endpoint=");
        if (e >= 0) {
            String endpoint = uri.substring(e + "endpoint=".length());
            int amp = endpoint.indexOf('&');
            return URI.create(amp < 0 ? endpoint : endpoint.substring(0, amp)).getPort();
        }
        String u = uri.startsWith("jdbc:") ? uri.substring(5) : uri;
        URI parsed = URI.create(u);
        if (parsed.getPort() > 0) {
            return parsed.getPort();
        }
        return u.startsWith("redis") ? 6379 : u.startsWith("postgres") ? 5432 : 5701;
    }

    /** The established TCP connections processes hold to a port, read from {@code /proc} (Linux). */
    static final class ClientSockets {
        private ClientSockets() {
        }

        /** The count, or -1 where {@code /proc} cannot be read. */
        static long established(List<Long> pids, int port) {
            Set<String> inodes = new HashSet<>();
            try {
                for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
                    Path p = Paths.get(table);
                    if (!Files.exists(p)) {
                        continue;
                    }
                    List<String> lines = Files.readAllLines(p);
                    for (String line : lines.subList(1, lines.size())) {
                        String[] f = line.trim().split("\\s+");
                        String remote = f[2];
                        int remotePort = Integer.parseInt(remote.substring(remote.indexOf(':') + 1), 16);
                        if (f[3].equals("01") && remotePort == port) {
                            inodes.add("socket:[" + f[9] + "]");
                        }
                    }
                }
                long count = 0;
                for (long pid : pids) {
                    try (Stream<Path> fds = Files.list(Paths.get("/proc", Long.toString(pid), "fd"))) {
                        for (Path fd : (Iterable<Path>) fds::iterator) {
                            try {
                                if (inodes.contains(Files.readSymbolicLink(fd).toString())) {
                                    count++;
                                }
                            } catch (IOException gone) {
                                // closed while listing
                            }
                        }
                    }
                }
                return count;
            } catch (IOException | RuntimeException e) {
                return -1;
            }
        }
    }

    /** A child JVM running a {@link ScaleInstance}, driven over its standard input. */
    private static final class Child implements AutoCloseable {
        final Process process;
        private final Writer in;
        private final BufferedReader out;
        private final ExecutorService reader = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "scale-child-reader");
            t.setDaemon(true);
            return t;
        });
        private final Path log;
        int instances;
        int subscribed;
        int failedAttempts;
        String firstError;

        /**
         * @param args {@link ScaleInstance}'s arguments
         * @param heap the child's {@code -Xmx} option: Hazelcast clients take several MB of heap each
         */
        Child(List<String> args, String name, String heap) {
            try {
                Path dir = Paths.get(System.getProperty("java.io.tmpdir"), "redeye-scale-" + StoreFixture.RUN_ID);
                Files.createDirectories(dir);
                log = dir.resolve(name + ".log");
                String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
                List<String> command = new ArrayList<>(List.of(java, heap, "-Xss512k", "-XX:+UseSerialGC",
                        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
                        ScaleInstance.class.getName()));
                command.addAll(args);
                process = new ProcessBuilder(command).redirectError(log.toFile()).start();
            } catch (IOException e) {
                throw new UncheckedIOException("could not start a child JVM", e);
            }
            in = new java.io.OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            String ready = line();
            if (!"ready".equals(ready)) {
                close();
                throw new IllegalStateException("a child JVM did not start: " + ready + "; its log: " + tail());
            }
        }

        void send(String command) {
            try {
                in.write(command + "\n");
                in.flush();
            } catch (IOException e) {
                throw new UncheckedIOException("a child JVM stopped reading; its log: " + tail(), e);
            }
        }

        /** The answer to the last command sent, as key=value pairs. */
        Map<String, String> answer() {
            String answer = line();
            if (answer == null || answer.startsWith("error")) {
                throw new IllegalStateException("a child JVM answered " + answer + "; its log: " + tail());
            }
            Map<String, String> m = new HashMap<>();
            int error = answer.indexOf(" error=");
            if (error >= 0) { // the last field, free text
                m.put("error", answer.substring(error + " error=".length()));
                answer = answer.substring(0, error);
            }
            for (String kv : answer.split(" ")) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    m.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
            }
            return m;
        }

        private String line() {
            Future<String> f = reader.submit(out::readLine);
            try {
                return f.get(ANSWER_SECONDS, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                f.cancel(true);
                throw new IllegalStateException("a child JVM did not answer within " + ANSWER_SECONDS + " s; its log: "
                        + tail(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException("reading a child JVM failed: " + e.getCause(), e.getCause());
            }
        }

        private String tail() {
            try {
                String s = Files.readString(log);
                return s.length() > 2000 ? s.substring(s.length() - 2000) : s;
            } catch (IOException e) {
                return "(unreadable: " + e + ")";
            }
        }

        /** Asks the child to close its instances and exit; destroys it if it does not within two minutes. */
        @Override
        public void close() {
            try {
                if (process.isAlive()) {
                    in.write("quit\n");
                    in.flush();
                }
            } catch (IOException ignored) {
                // the child is gone already: destroyed below
            }
            try {
                if (!process.waitFor(2, TimeUnit.MINUTES)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
            reader.shutdownNow();
        }
    }
}
