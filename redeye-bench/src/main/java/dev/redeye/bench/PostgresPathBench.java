package dev.redeye.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.redeye.OpenMode;
import dev.redeye.Stores;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.Store;
import dev.redeye.store.postgres.PostgresStore;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The PostgreSQL store's two hot paths next to the plain-JDBC work they cannot beat, paired in one loop (issue
 * 13, targets 1 and 2), so both sides see the same machine and server state:
 *
 * <ul>
 * <li><b>record path</b>: {@code store.recordFailure} below the threshold (one row-locked read-modify-write)
 * and at the opening (the same, a transition: it also publishes the event and its commit waits for the WAL
 * flush) vs plain JDBC on a pooled connection: {@code SELECT <the state columns> ... FOR UPDATE},
 * {@code UPDATE}, {@code COMMIT} on another key of the same table (target 1: store p50 at most 1.3x, both);</li>
 * <li><b>healthy read</b>: {@code store.get} vs the same {@code SELECT} by primary key through plain JDBC on a
 * pooled connection (target 2: at most 1.3x).</li>
 * </ul>
 * Each iteration runs the five calls once, in a random order (seeded; so that no call always follows the same
 * other one, such as a read always following a commit), after putting the opening's key back to a closed state,
 * untimed. One thread. The
 * store is measured in three set-ups: {@code PostgresStore.builder(HikariDataSource)} with the default bounds
 * set per transaction (one {@code set_config} statement in the first round trip of every call), the same with
 * the bounds set once per pooled session ({@code connectionInitSql}, {@code timeoutsPerTransaction(false)}),
 * and {@code Stores.open(uri)} (the store's own pool, bounds per session). The JDBC side always borrows from a
 * HikariCP pool of its own with the same settings.
 *
 * <p>Run it on a quiet machine (PostgreSQL from {@code REDEYE_POSTGRES_URL}, default
 * {@code jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}); it writes in a schema of its own and drops
 * it at the end. After the table it prints one MET / MISSED line per target, from this run's own ratios (a
 * target is met when every set-up meets it):
 * <pre>
 * mvn -B -q package -pl redeye-bench -am -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.PostgresPathBench [--samples 20000] [--warmup 5000]
 * </pre>
 */
public final class PostgresPathBench {
    /** Per session, as the store sets them per transaction by default. */
    private static final String SESSION_BOUNDS = "SET lock_timeout = 1000; SET statement_timeout = 1500; "
            + "SET idle_in_transaction_session_timeout = 2000";
    private static final String RECORD_SUB = "recordFailure below the threshold vs SELECT FOR UPDATE; UPDATE; COMMIT";
    private static final String RECORD_OPEN = "recordFailure at the opening vs SELECT FOR UPDATE; UPDATE; COMMIT";
    private static final String READ = "get vs SELECT by primary key";
    /** Targets 1 and 2: store p50 at most this times the plain-JDBC p50. */
    private static final double TARGET = 1.30;

    private PostgresPathBench() {
    }

    /**
     * Runs the comparison and prints a Markdown table.
     *
     * @param args {@code [--samples N] [--warmup N]}
     * @throws IllegalArgumentException on an unknown argument
     */
    public static void main(String[] args) throws Exception {
        int samples = 20_000;
        int warmup = 5_000;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--samples" -> samples = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; expected [--samples N] [--warmup N]");
            }
        }
        String url = System.getenv().getOrDefault("REDEYE_POSTGRES_URL",
                "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres");
        if (!url.startsWith("jdbc:")) {
            throw new IllegalArgumentException("REDEYE_POSTGRES_URL must be a jdbc:postgresql:// URL here");
        }
        String schema = "redeye_pathbench_" + StoreFixture.RUN_ID;
        Table t = new Table("store set-up", "path", "store p50 (µs)", "store p99 (µs)", "plain JDBC p50 (µs)",
                "plain JDBC p99 (µs)", "p50 ratio", "target");
        List<Pair> pairs = new ArrayList<>();
        try (HikariDataSource jdbc = StoreFixture.pool(url, 2)) {
            for (String setUp : List.of("builder(HikariDataSource), bounds per transaction",
                    "builder(HikariDataSource), bounds per session", "Stores.open(uri)")) {
                List<AutoCloseable> owned = new ArrayList<>();
                Store store = open(setUp, url, schema, owned);
                try {
                    measure(setUp, store, jdbc, samples, warmup, t, pairs);
                } finally {
                    store.close();
                    for (AutoCloseable c : owned) {
                        c.close();
                    }
                }
            }
        } finally {
            try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
                st.execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
            }
        }
        System.out.println("# PostgreSQL store hot paths vs plain JDBC");
        System.out.println();
        System.out.println(DistributedBench.machine());
        System.out.println("Command: `java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.PostgresPathBench"
                + (args.length == 0 ? "" : " " + String.join(" ", args)) + "`");
        System.out.println();
        System.out.println("One thread; " + samples + " paired iterations after " + warmup + " warm-up ones; µs.");
        System.out.println();
        System.out.println(t);
        System.out.println("### Targets (issue 13, PostgreSQL)");
        System.out.println();
        System.out.print(targets(pairs));
    }

    /** The paired figures of one set-up and path: store and plain-JDBC p50. */
    private record Pair(String setUp, String path, long store50, long jdbc50) {
        double ratio() {
            return store50 / (double) jdbc50;
        }
    }

    /** The MET / MISSED lines of targets 1 and 2, from the pairs this run measured. */
    private static String targets(List<Pair> pairs) {
        StringBuilder out = new StringBuilder();
        target(out, "target 1, record path (recordFailure below the threshold and at the opening) p50 at most "
                + "1.3x the plain-JDBC row-locked transaction", pairs, List.of(RECORD_SUB, RECORD_OPEN));
        target(out, "target 2, healthy read (get) p50 at most 1.3x the same SELECT by primary key through plain "
                + "JDBC", pairs, List.of(READ));
        return out.toString();
    }

    private static void target(StringBuilder out, String target, List<Pair> pairs, List<String> paths) {
        boolean met = true;
        StringBuilder measured = new StringBuilder();
        for (Pair p : pairs) {
            if (!paths.contains(p.path())) {
                continue;
            }
            met &= p.ratio() <= TARGET;
            measured.append(measured.length() == 0 ? "" : "; ").append(p.setUp()).append(", ")
                    .append(p.path().substring(0, p.path().indexOf(" vs "))).append(": ")
                    .append(Table.fmt(p.ratio(), 2)).append('x');
        }
        out.append("- ").append(met ? "MET" : "MISSED").append(": ").append(target).append(" — measured ")
                .append(measured).append('\n');
    }

    private static Store open(String setUp, String url, String schema, List<AutoCloseable> owned) {
        if (setUp.startsWith("Stores.open")) {
            return Stores.open(url + (url.contains("?") ? "&" : "?") + "schema=" + schema + "&purgeIntervalMillis=0",
                    OpenMode.STRICT);
        }
        boolean perSession = setUp.endsWith("per session");
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(2);
        config.setMinimumIdle(1);
        config.setPoolName("redeye-bench-store");
        if (perSession) {
            config.setConnectionInitSql(SESSION_BOUNDS);
        }
        HikariDataSource pool = new HikariDataSource(config);
        owned.add(pool);
        return PostgresStore.builder(pool).schema(schema).timeoutsPerTransaction(!perSession)
                .purgeInterval(Duration.ZERO).build();
    }

    private static void measure(String setUp, Store store, HikariDataSource jdbc, int n, int warmup,
                                Table t, List<Pair> pairs) throws SQLException {
        PostgresStore pg = (PostgresStore) store;
        Policy never = Policy.builder().failureThreshold(Integer.MAX_VALUE).build();
        Policy opens = Policy.builder().failureThreshold(1).build();
        String storeKey = "path-store";
        String openKey = "path-open";
        String jdbcKey = "path-jdbc";
        store.delete(storeKey);
        store.delete(openKey);
        store.delete(jdbcKey);
        pg.apply(storeKey, AtomicOperation.failure(), never, 1);
        // the baseline's row, written by the store: the same layout
        JdbcRecordBaseline baseline = new JdbcRecordBaseline(jdbc, pg, jdbcKey);
        byte[] jdbcHash = JdbcRecordBaseline.sha256(jdbcKey);
        String read = "SELECT " + JdbcRecordBaseline.COLUMNS + " FROM " + JdbcRecordBaseline.table(pg)
                + " WHERE key_hash = ?";
        Latencies storeRecord = new Latencies(n);
        Latencies storeOpen = new Latencies(n);
        Latencies jdbcRecord = new Latencies(n);
        Latencies storeRead = new Latencies(n);
        Latencies jdbcRead = new Latencies(n);
        long now = 2;
        long version = 1;
        int[] order = {0, 1, 2, 3, 4};
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < warmup + n; i++) {
            boolean measured = i >= warmup;
            // closed again, at a version above the opening's, so that the timed call below opens it
            store.put(openKey, BreakerState.initial(version), Duration.ofHours(1));
            version += 2;
            long[] d = new long[5];
            shuffle(order, random);
            for (int which : order) {
                long t0 = System.nanoTime();
                switch (which) {
                    case 0 -> pg.apply(storeKey, AtomicOperation.failure(), never, now++);
                    case 1 -> baseline.once();
                    case 2 -> pg.get(storeKey);
                    case 3 -> jdbcRead(jdbc, read, jdbcHash);
                    default -> {
                        if (!pg.apply(openKey, AtomicOperation.failure(), opens, now++).isTransition()) {
                            throw new IllegalStateException("the opening's recordFailure did not open");
                        }
                    }
                }
                d[which] = System.nanoTime() - t0;
            }
            if (measured) {
                storeRecord.add(d[0]);
                jdbcRecord.add(d[1]);
                storeRead.add(d[2]);
                jdbcRead.add(d[3]);
                storeOpen.add(d[4]);
            }
        }
        row(t, pairs, setUp, RECORD_SUB, storeRecord, jdbcRecord);
        row(t, pairs, setUp, RECORD_OPEN, storeOpen, jdbcRecord);
        row(t, pairs, setUp, READ, storeRead, jdbcRead);
    }

    private static void shuffle(int[] a, SplittableRandom random) {
        for (int i = a.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int x = a[i];
            a[i] = a[j];
            a[j] = x;
        }
    }

    private static void row(Table t, List<Pair> pairs, String setUp, String path, Latencies store, Latencies jdbc) {
        long s50 = store.percentile(50);
        long j50 = jdbc.percentile(50);
        pairs.add(new Pair(setUp, path, s50, j50));
        t.row(setUp, path, Table.micros(s50), Table.micros(store.percentile(99)), Table.micros(j50),
                Table.micros(jdbc.percentile(99)), Table.fmt(s50 / (double) j50, 2), "<= " + Table.fmt(TARGET, 2));
    }

    private static void jdbcRead(HikariDataSource pool, String read, byte[] hash) {
        try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(read)) {
            ps.setBytes(1, hash);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new StoreException("the baseline's row is missing");
                }
                // decoded like the store decodes its row
                new BreakerState(rs.getInt(2), rs.getLong(3), rs.getBoolean(4), rs.getLong(5), rs.getInt(6),
                        rs.getDouble(7), rs.getLong(8), rs.getInt(9), rs.getBoolean(10), rs.getLong(11));
            }
        } catch (SQLException e) {
            throw new StoreException("the plain-JDBC read failed: " + e.getMessage(), e);
        }
    }
}
