package dev.redeye.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The settings of one {@link DistributedBench} run: which backends and sections, where the services are
 * ({@code REDEYE_REDIS_URL}, {@code REDEYE_POSTGRES_URL}, {@code REDEYE_DYNAMODB_URL}, {@code REDEYE_HAZELCAST_URL}), and whether this is a short smoke run
 * ({@code --quick}: a few hundred calls per figure, fit only to check the harness works), and where charts go
 * ({@code --chart-dir}).
 */
final class BenchEnv {
    static final List<String> ALL_STORES = List.of("memory", "redis", "postgres", "dynamodb", "hazelcast");
    static final List<String> ALL_SECTIONS = List.of("ops", "latency", "record", "window", "quorum", "servertime", "wait", "atomic",
            "growth", "fleet");
    /**
     * Sections run only when named: {@code scale} takes a quiet machine and tens of minutes; {@code batching} loads
     * each store to several times its per-key ceiling for a few minutes.
     */
    static final List<String> OPT_IN_SECTIONS = List.of("scale", "batching");

    private final List<String> stores;
    private final List<String> sections;
    private final boolean quick;
    private final String redisUrl;
    private final String postgresUrl;
    private final Path chartDir;

    BenchEnv(List<String> stores, List<String> sections, boolean quick, String redisUrl, String postgresUrl) {
        this(stores, sections, quick, redisUrl, postgresUrl, null);
    }

    /** @param chartDir where sections write their charts, or null for none; must be an existing directory */
    BenchEnv(List<String> stores, List<String> sections, boolean quick, String redisUrl, String postgresUrl,
            Path chartDir) {
        if (chartDir != null && !Files.isDirectory(chartDir)) {
            throw new IllegalArgumentException("--chart-dir " + chartDir + " is not a directory");
        }
        this.chartDir = chartDir;
        for (String s : stores) {
            if (!ALL_STORES.contains(s)) {
                throw new IllegalArgumentException("unknown store '" + s + "'; known: " + ALL_STORES);
            }
        }
        for (String s : sections) {
            if (!ALL_SECTIONS.contains(s) && !OPT_IN_SECTIONS.contains(s)) {
                throw new IllegalArgumentException("unknown section '" + s + "'; known: " + ALL_SECTIONS + " and "
                        + OPT_IN_SECTIONS);
            }
        }
        this.stores = List.copyOf(stores);
        this.sections = List.copyOf(sections);
        this.quick = quick;
        int q = redisUrl.indexOf('?');
        this.redisUrl = q < 0 ? redisUrl : redisUrl.substring(0, q);
        this.postgresUrl = postgresUrl;
    }

    /**
     * Parses {@code [--stores a,b] [--sections a,b] [--quick] [--chart-dir DIR]}.
     *
     * @throws IllegalArgumentException on an unknown argument, store or section
     */
    static BenchEnv parse(String[] args) {
        List<String> stores = ALL_STORES;
        List<String> sections = ALL_SECTIONS;
        boolean quick = false;
        Path chartDir = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--stores":
                    stores = list(args, ++i);
                    break;
                case "--sections":
                    sections = list(args, ++i);
                    break;
                case "--quick":
                    quick = true;
                    break;
                case "--chart-dir":
                    chartDir = Path.of(list(args, ++i).get(0));
                    break;
                default:
                    throw new IllegalArgumentException("unknown argument '" + args[i]
                            + "'; usage: DistributedBench [--stores memory,redis,postgres,dynamodb,hazelcast]"
                            + " [--sections ops,latency,record,window,quorum,servertime,wait,atomic,growth,fleet,scale,batching]"
                            + " [--quick] [--chart-dir DIR]");
            }
        }
        String redis = env("REDEYE_REDIS_URL", "redis://127.0.0.1:6379");
        String pg = env("REDEYE_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres");
        return new BenchEnv(stores, sections, quick, redis, pg, chartDir);
    }

    private static List<String> list(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException("missing value after " + args[i - 1]);
        }
        return Arrays.asList(args[i].split(","));
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }

    List<String> stores() {
        return stores;
    }

    boolean runs(String section) {
        return sections.contains(section);
    }

    /** The directory sections write their charts into ({@code --chart-dir}), or null: no charts. */
    Path chartDir() {
        return chartDir;
    }

    boolean quick() {
        return quick;
    }

    String redisUrl() {
        return redisUrl;
    }

    String postgresUrl() {
        return postgresUrl;
    }

    /** Real time of each load phase of the operations table. */
    long phaseMillis() {
        return quick ? 300 : 2_000;
    }

    /**
     * A fixture for a backend name.
     *
     * @param pooled for PostgreSQL: over a HikariCP pool (true) or through Stores.open with the store's own pool (false)
     */
    StoreFixture fixture(String store, boolean pooled) {
        switch (store) {
            case "memory":
                return StoreFixture.memory();
            case "redis":
                return StoreFixture.redis(redisUrl);
            case "postgres":
                return StoreFixture.postgres(postgresUrl, pooled);
            case "dynamodb":
                return StoreFixture.dynamodb(env("REDEYE_DYNAMODB_URL", "http://127.0.0.1:4567"));
            case "hazelcast":
                return StoreFixture.hazelcast(System.getenv("REDEYE_HAZELCAST_URL"));
            default:
                throw new IllegalArgumentException("unknown store '" + store + "'; known: " + ALL_STORES);
        }
    }

    /** Whether the run includes a backend. */
    boolean has(String store) {
        return stores.contains(store);
    }

    static final Set<String> REMOTE = Set.of("redis", "postgres", "dynamodb", "hazelcast");

    /**
     * Paired samples per path of a record section (record, window, quorum) for {@code store}: fewer for DynamoDB
     * (dynalite answers in milliseconds), fewer again under {@code --quick}.
     */
    int recordSamples(String store) {
        boolean slow = store.equals("dynamodb");
        return quick() ? (slow ? 30 : 100) : (slow ? 400 : 3_000);
    }

    /** Warm-up iterations before {@link #recordSamples(String)}. */
    int recordWarmup(String store) {
        boolean slow = store.equals("dynamodb");
        return quick() ? (slow ? 10 : 50) : (slow ? 100 : 1_000);
    }
}
