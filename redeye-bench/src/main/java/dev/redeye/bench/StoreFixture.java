package dev.redeye.bench;

import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.IMap;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.redeye.InMemoryStore;
import dev.redeye.OpenMode;
import dev.redeye.Stores;
import dev.redeye.api.StoreException;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.StoreUris;
import dev.redeye.store.hazelcast.HazelcastStore;
import dev.redeye.store.hazelcast.RedeyeSerializableFactory;
import dev.redeye.store.postgres.PostgresStore;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/**
 * One backend of the distributed benchmarks: opens independent clients of one shared data set (each client
 * stands for one process), measures the backend's own round trip (the limit a store call cannot beat), and
 * removes everything the run wrote. A new backend joins the benchmarks by adding one factory here.
 *
 * <ul>
 * <li>{@link #memory()}: one {@link InMemoryStore}, each client a {@link InMemoryStore#newClient()} view; no
 * round trip.</li>
 * <li>{@link #redis(String)}: {@code Stores.open("redis://...?prefix=<unique>:")} per client (each with its own
 * {@code JedisPooled}); round trip = {@code PING} through a {@code JedisPooled}, the client the store uses;
 * clean-up deletes every key under the prefix.</li>
 * <li>{@link #postgres(String, boolean)}: {@code PostgresStore} over a HikariCP pool per client (the production
 * set-up the store's Javadoc shows), or {@code Stores.open("jdbc:postgresql://...&schema=<unique>")} with the
 * store's own pool; round trip = {@code SELECT 1} through a HikariCP pool; clean-up
 * drops the schema.</li>
 * <li>{@link #dynamodb(String)}: {@code Stores.open("dynamodb://...")} per client (each with its own
 * {@code DynamoDbClient}, the provider's breaker-sized timeouts) in a table unique to this run; round trip = a
 * consistent {@code GetItem} of a missing key through such a client; clean-up deletes the table.</li>
 * <li>{@link #hazelcast(String)}: {@code Stores.open("hazelcast://...?map=<unique>")} per client (each with its
 * own Hazelcast client); without a URL, one member started in this JVM (native mode); round trip =
 * {@code IMap.get} of an absent key through a store's own client; clean-up destroys both maps.</li>
 * </ul>
 *
 * <p>Not thread-safe to open clients concurrently; the clients themselves are as thread-safe as the stores.
 * {@link #close()} closes every client opened here, then removes the data; it never throws.
 */
public abstract class StoreFixture implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StoreFixture.class);

    /** A unique suffix for this JVM's keys and schemas: several runs never see each other's data. */
    static final String RUN_ID = Long.toString(System.currentTimeMillis(), 36);

    private final String name;
    private final List<Store> clients = new ArrayList<>();

    private StoreFixture(String name) {
        this.name = name;
    }

    /** The backend's name in the tables. */
    public final String name() {
        return name;
    }

    /**
     * A new independent client of this backend's shared data; closed by {@link #close()} if the caller has not.
     *
     * @throws StoreException if the backend cannot be reached
     */
    public final Store open() {
        Store s = newClient();
        clients.add(s);
        return s;
    }

    abstract Store newClient();

    /**
     * Whether the backend's server runs inside this JVM (a Hazelcast member started by the bench): its own heap
     * then moves every heap reading, so heap figures are not attributable to the breaker.
     */
    boolean serverInThisJvm() {
        return false;
    }

    /**
     * The URI a process outside this JVM opens a client of this backend's shared data with
     * ({@code Stores.open(uri())}: {@link ScaleBench}'s child JVMs), or {@code null} for an in-process store.
     */
    String uri() {
        return null;
    }

    /**
     * The clients the backend's server holds connected as the server itself counts them, or -1 where this
     * fixture cannot ask (Hazelcast: the members' client count, known only for a member in this JVM; the
     * other backends are asked directly by {@link ScaleBench}).
     */
    long serverClients() {
        return -1;
    }

    /** The backend's own round trip, or {@code null} for an in-process store. The caller closes it. */
    public abstract RoundTrip roundTrip();

    /**
     * The smallest write of the backend's own kind, on another key of the data {@code client} uses: the limit a
     * store's record call cannot beat ({@link RecordPathBench}). Redis: one {@code EVALSHA} of a trivial script
     * through the store's own client; PostgreSQL: {@link JdbcRecordBaseline} on a HikariCP pool; DynamoDB: one
     * conditional {@code UpdateItem} in the store's table; Hazelcast: one {@code executeOnKey} of a trivial
     * entry processor on the store's map. {@code null} for an in-process store. The caller closes it.
     *
     * @param client a client this fixture opened (its table, schema or map must exist: it has been used once)
     * @throws StoreException if the backend cannot be reached
     */
    public abstract RoundTrip recordBaseline(Store client);

    /**
     * One write of the backend's own kind on one key, for the per-key ceiling of {@link ScaleBench}: each of
     * several threads calls one of its own at once, all on the same key. Redis, PostgreSQL and Hazelcast: their
     * {@link #recordBaseline(Store)}; DynamoDB: a conditional {@code UpdateItem} whose condition always holds
     * (the baseline's counter condition would make the threads fail each other's writes). The caller closes it.
     *
     * @param client a client this fixture opened (its table, schema or map must exist: it has been used once)
     * @throws StoreException if the backend cannot be reached
     */
    public RoundTrip keyCeiling(Store client) {
        return recordBaseline(client);
    }

    /** Removes the data this fixture wrote; called by {@link #close()} after every client is closed. */
    abstract void cleanUp();

    @Override
    public final void close() {
        for (Store s : clients) {
            try {
                s.close();
            } catch (RuntimeException e) {
                LOG.warn("closing a {} client failed", name, e);
            }
        }
        clients.clear();
        try {
            cleanUp();
        } catch (RuntimeException e) {
            LOG.warn("cleaning up {} failed", name, e);
        }
    }

    /** One store round trip, repeated by the latency table next to the breaker's own calls. */
    public interface RoundTrip extends AutoCloseable {
        /** What is measured, for the table ("PING", "SELECT 1"). */
        String describe();

        /**
         * One round trip.
         *
         * @throws StoreException if the backend fails
         */
        void once();

        @Override
        void close();
    }

    // ------------------------------------------------------------------------------------------------ memory

    /** The in-process store, shared by its client views. */
    public static StoreFixture memory() {
        return new StoreFixture("memory") {
            private final InMemoryStore shared = new InMemoryStore();

            @Override
            Store newClient() {
                return shared.newClient();
            }

            @Override
            public RoundTrip roundTrip() {
                return null;
            }

            @Override
            public RoundTrip recordBaseline(Store client) {
                return null;
            }

            @Override
            void cleanUp() {
                shared.close();
            }
        };
    }

    // ------------------------------------------------------------------------------------------------- redis

    /**
     * Redis through {@code Stores.open}, under a prefix unique to this run.
     *
     * @param baseUrl for example {@code redis://127.0.0.1:6379}, without a query
     * @throws IllegalArgumentException if the URL has a query
     */
    public static StoreFixture redis(String baseUrl) {
        Objects.requireNonNull(baseUrl, "baseUrl");
        if (baseUrl.indexOf('?') >= 0) {
            throw new IllegalArgumentException("give the Redis URL without a query: " + StoreUris.redact(baseUrl));
        }
        String prefix = "redeye-bench:" + RUN_ID + ":";
        String uri = baseUrl + "?prefix=" + URLEncoder.encode(prefix, StandardCharsets.UTF_8);
        return new StoreFixture("redis") {
            @Override
            Store newClient() {
                return Stores.open(uri, OpenMode.STRICT);
            }

            @Override
            String uri() {
                return uri;
            }

            @Override
            public RoundTrip roundTrip() {
                JedisPooled jedis = new JedisPooled(URI.create(baseUrl));
                return new RoundTrip() {
                    @Override
                    public String describe() {
                        return "PING (JedisPooled)";
                    }

                    @Override
                    public void once() {
                        jedis.ping();
                    }

                    @Override
                    public void close() {
                        jedis.close();
                    }
                };
            }

            @Override
            public RoundTrip recordBaseline(Store client) {
                JedisPooled jedis = new JedisPooled(URI.create(baseUrl));
                String key = prefix + "{record-baseline}:x";
                String sha = jedis.scriptLoad(TRIVIAL_SCRIPT, key);
                List<String> keys = List.of(key);
                List<String> args = List.of();
                return new RoundTrip() {
                    @Override
                    public String describe() {
                        return "EVALSHA `" + TRIVIAL_SCRIPT + "` (JedisPooled)";
                    }

                    @Override
                    public void once() {
                        jedis.evalsha(sha, keys, args);
                    }

                    @Override
                    public void close() {
                        jedis.close();
                    }
                };
            }

            @Override
            void cleanUp() {
                try (JedisPooled jedis = new JedisPooled(URI.create(baseUrl))) {
                    String cursor = ScanParams.SCAN_POINTER_START;
                    ScanParams match = new ScanParams().match(prefix + "*").count(1000);
                    long deleted = 0;
                    do {
                        ScanResult<String> page = jedis.scan(cursor, match);
                        for (String key : page.getResult()) {
                            deleted += jedis.del(key);
                        }
                        cursor = page.getCursor();
                    } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
                    LOG.info("deleted {} Redis keys under {}", deleted, prefix);
                }
            }
        };
    }

    /** The Redis record baseline's script: the cheapest EVALSHA there is. */
    static final String TRIVIAL_SCRIPT = "return 1";

    /** A Jedis client for side measurements ({@code INFO commandstats}); the caller closes it. */
    static JedisPooled jedis(String baseUrl) {
        return new JedisPooled(URI.create(baseUrl));
    }

    // ---------------------------------------------------------------------------------------------- postgres

    /**
     * PostgreSQL in a schema unique to this run.
     *
     * @param jdbcUrl for example {@code jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}
     * @param pooled  {@code true}: {@code PostgresStore.builder(HikariDataSource)} per client (4 connections at
     *                most each); {@code false}: {@code Stores.open(jdbcUrl + "&schema=...")}, the store's own
     *                small pool
     */
    public static StoreFixture postgres(String jdbcUrl, boolean pooled) {
        Objects.requireNonNull(jdbcUrl, "jdbcUrl");
        String schema = postgresSchema(pooled);
        List<HikariDataSource> pools = new ArrayList<>();
        String uri = jdbcUrl + (jdbcUrl.indexOf('?') >= 0 ? "&" : "?") + "schema=" + schema;
        return new StoreFixture(pooled ? "postgres" : "postgres (Stores.open URI)") {
            @Override
            String uri() {
                return uri;
            }

            @Override
            Store newClient() {
                if (!pooled) {
                    return Stores.open(uri, OpenMode.STRICT);
                }
                HikariDataSource pool = pool(jdbcUrl, 4);
                pools.add(pool);
                return PostgresStore.builder(pool).schema(schema).build();
            }

            @Override
            public RoundTrip roundTrip() {
                HikariDataSource pool = pool(jdbcUrl, 2);
                return new RoundTrip() {
                    @Override
                    public String describe() {
                        return "SELECT 1 (HikariCP)";
                    }

                    @Override
                    public void once() {
                        try (Connection c = pool.getConnection();
                                PreparedStatement ps = c.prepareStatement("SELECT 1");
                                ResultSet rs = ps.executeQuery()) {
                            if (!rs.next()) {
                                throw new StoreException("SELECT 1 returned no row");
                            }
                        } catch (SQLException e) {
                            throw new StoreException("SELECT 1 failed: " + e.getMessage(), e);
                        }
                    }

                    @Override
                    public void close() {
                        pool.close();
                    }
                };
            }

            @Override
            public RoundTrip recordBaseline(Store client) {
                HikariDataSource pool = pool(jdbcUrl, 2);
                JdbcRecordBaseline baseline;
                try {
                    baseline = new JdbcRecordBaseline(pool, (PostgresStore) client, "record-baseline");
                } catch (RuntimeException e) {
                    pool.close();
                    throw e;
                }
                return new RoundTrip() {
                    @Override
                    public String describe() {
                        return "SELECT FOR UPDATE; UPDATE; COMMIT (HikariCP)";
                    }

                    @Override
                    public void once() {
                        baseline.once();
                    }

                    @Override
                    public void close() {
                        pool.close();
                    }
                };
            }

            @Override
            void cleanUp() {
                pools.forEach(HikariDataSource::close);
                pools.clear();
                try (Connection c = DriverManager.getConnection(jdbcUrl); Statement st = c.createStatement()) {
                    st.execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
                    LOG.info("dropped schema {}", schema);
                } catch (SQLException e) {
                    throw new StoreException("dropping schema " + schema + " failed: " + e.getMessage(), e);
                }
            }
        };
    }

    // --------------------------------------------------------------------------------------------- hazelcast

    /**
     * Hazelcast through {@code Stores.open}, in maps unique to this run.
     *
     * @param url for example {@code hazelcast://dev@10.0.0.5:5701}, without a query; null or blank starts one
     *            member in this JVM (it carries redeye's classes, so native mode; it also shares this JVM's
     *            cores, so point the URL at a member of its own for latency figures)
     */
    public static StoreFixture hazelcast(String url) {
        if (url != null && url.indexOf('?') >= 0) {
            throw new IllegalArgumentException("give the Hazelcast URL without a query: " + StoreUris.redact(url));
        }
        HazelcastInstance member = url == null || url.isBlank() ? benchMember() : null;
        String base = member == null ? url : "hazelcast://" + member.getConfig().getClusterName() + "@127.0.0.1:"
                + member.getConfig().getNetworkConfig().getPort();
        String uri = base + "?map=redeye-bench-" + RUN_ID + "&timeout=10000";
        return new StoreFixture("hazelcast") {
            @Override
            Store newClient() {
                return Stores.open(uri, OpenMode.STRICT);
            }

            @Override
            boolean serverInThisJvm() {
                return member != null;
            }

            @Override
            String uri() {
                return uri;
            }

            @Override
            long serverClients() {
                return member == null ? -1 : member.getClientService().getConnectedClients().size();
            }

            @Override
            public RoundTrip roundTrip() {
                HazelcastStore s = (HazelcastStore) Stores.open(uri, OpenMode.STRICT);
                IMap<String, Object> map = s.instance().getMap(s.mapName());
                return new RoundTrip() {
                    @Override
                    public String describe() {
                        return "IMap.get (the store's client)";
                    }

                    @Override
                    public void once() {
                        map.get("redeye-bench-absent");
                    }

                    @Override
                    public void close() {
                        s.close();
                    }
                };
            }

            @Override
            public RoundTrip recordBaseline(Store client) {
                HazelcastStore s = (HazelcastStore) client;
                IMap<String, Object> map = s.instance().getMap(s.mapName());
                String key = "redeye-bench-record-baseline";
                return new RoundTrip() {
                    @Override
                    public String describe() {
                        return "executeOnKey, trivial processor (the store's client)";
                    }

                    @Override
                    public void once() {
                        map.executeOnKey(key, new TrivialProcessor());
                    }

                    @Override
                    public void close() {
                        // the store owns its client
                    }
                };
            }

            @Override
            void cleanUp() {
                try (HazelcastStore s = (HazelcastStore) Stores.open(uri, OpenMode.STRICT)) {
                    s.instance().getMap(s.mapName()).destroy();
                    LOG.info("destroyed Hazelcast map {}", s.mapName());
                } finally {
                    if (member != null) {
                        member.shutdown();
                    }
                }
            }
        };
    }

    /**
     * The Hazelcast record baseline's entry processor: runs on the member owning the key, reads the entry and
     * answers, writing nothing. The member must have this class (the bench's own member has).
     */
    public static final class TrivialProcessor implements EntryProcessor<String, Object, String>, DataSerializable {
        private static final long serialVersionUID = 1L;

        /** For Hazelcast's deserialization on the member. */
        public TrivialProcessor() {
        }

        @Override
        public String process(Map.Entry<String, Object> entry) {
            return entry.getValue() == null ? "absent" : "present";
        }

        @Override
        public EntryProcessor<String, Object, String> getBackupProcessor() {
            return null;
        }

        @Override
        public void writeData(ObjectDataOutput out) {
        }

        @Override
        public void readData(ObjectDataInput in) {
        }
    }

    /** One member on a free port of 127.0.0.1, under a cluster name of its own. */
    private static HazelcastInstance benchMember() {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            port = free.getLocalPort();
        } catch (java.io.IOException e) {
            throw new StoreException("no free port for a Hazelcast member: " + e.getMessage(), e);
        }
        Config c = new Config().setClusterName("redeye-bench-" + RUN_ID);
        c.setProperty("hazelcast.logging.type", "slf4j");
        c.setProperty("hazelcast.phone.home.enabled", "false");
        c.getNetworkConfig().setPort(port).setPortAutoIncrement(false).getInterfaces().setEnabled(true)
                .addInterface("127.0.0.1");
        c.getNetworkConfig().getJoin().getMulticastConfig().setEnabled(false);
        c.getNetworkConfig().getJoin().getAutoDetectionConfig().setEnabled(false);
        RedeyeSerializableFactory.register(c); // native mode: the member reads redeye's entry processors
        LOG.info("no REDEYE_HAZELCAST_URL: starting a Hazelcast member in this JVM on 127.0.0.1:{}", port);
        return Hazelcast.newHazelcastInstance(c);
    }

    /** The schema of this run's {@link #postgres(String, boolean)} fixture of that kind. */
    static String postgresSchema(boolean pooled) {
        return "redeye_bench_" + RUN_ID + (pooled ? "" : "_uri");
    }

    static HikariDataSource pool(String jdbcUrl, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(1);
        config.setPoolName("redeye-bench");
        return new HikariDataSource(config);
    }

    // ---------------------------------------------------------------------------------------------- dynamodb

    /**
     * DynamoDB (dynalite or a real endpoint) in a table unique to this run, created on demand.
     *
     * @param endpoint for example {@code http://127.0.0.1:4567} (dynalite; any credentials); for AWS itself use
     *                 the regional endpoint with credentials from the SDK's default chain
     */
    public static StoreFixture dynamodb(String endpoint) {
        Objects.requireNonNull(endpoint, "endpoint");
        String table = "redeye_bench_" + RUN_ID;
        String uri = "dynamodb://bench:bench@" + table + "?region=us-east-1&createTable=true&endpoint=" + endpoint;
        return new StoreFixture("dynamodb") {
            @Override
            Store newClient() {
                return Stores.open(uri, OpenMode.STRICT);
            }

            @Override
            String uri() {
                return uri;
            }

            @Override
            public RoundTrip roundTrip() {
                DynamoDbClient client = dynamoClient(endpoint);
                Map<String, AttributeValue> key =
                        Map.of("pk", AttributeValue.builder()
                                .s("o#round-trip").build());
                return new RoundTrip() {
                    @Override
                    public String describe() {
                        return "GetItem, consistent (DynamoDbClient)";
                    }

                    @Override
                    public void once() {
                        try {
                            client.getItem(g -> g.tableName(table).key(key).consistentRead(true));
                        } catch (SdkException e) {
                            throw new StoreException("GetItem failed: " + e.getMessage(), e);
                        }
                    }

                    @Override
                    public void close() {
                        client.close();
                    }
                };
            }

            @Override
            public RoundTrip recordBaseline(Store store) {
                DynamoDbClient client = dynamoClient(endpoint);
                Map<String, AttributeValue> key =
                        Map.of("pk", AttributeValue.builder().s("bench#record-baseline").build());
                Map<String, String> names = Map.of("#n", "n");
                return new RoundTrip() {
                    /** The counter this client last wrote; -1: none yet (the item does not exist). */
                    private long seen = -1;

                    @Override
                    public String describe() {
                        return "UpdateItem, conditional (DynamoDbClient)";
                    }

                    @Override
                    public void once() {
                        long next = seen + 1;
                        Map<String, AttributeValue> values = new java.util.HashMap<>();
                        values.put(":next", AttributeValue.builder().n(Long.toString(next)).build());
                        String condition;
                        if (seen < 0) {
                            condition = "attribute_not_exists(#n)";
                        } else {
                            condition = "#n = :seen";
                            values.put(":seen", AttributeValue.builder().n(Long.toString(seen)).build());
                        }
                        try {
                            client.updateItem(u -> u.tableName(table).key(key).updateExpression("SET #n = :next")
                                    .conditionExpression(condition).expressionAttributeNames(names)
                                    .expressionAttributeValues(values));
                        } catch (SdkException e) {
                            throw new StoreException("UpdateItem failed: " + e.getMessage(), e);
                        }
                        seen = next;
                    }

                    @Override
                    public void close() {
                        client.close();
                    }
                };
            }

            @Override
            public RoundTrip keyCeiling(Store store) {
                DynamoDbClient client = dynamoClient(endpoint);
                Map<String, AttributeValue> key = Map.of("pk", AttributeValue.builder().s("bench#key-ceiling").build());
                Map<String, String> names = Map.of("#n", "n");
                Map<String, AttributeValue> values = Map.of(":one", AttributeValue.builder().n("1").build(),
                        ":never", AttributeValue.builder().n("-1").build());
                return new RoundTrip() {
                    @Override
                    public String describe() {
                        return "UpdateItem ADD, conditional, condition always true (DynamoDbClient)";
                    }

                    @Override
                    public void once() {
                        try {
                            client.updateItem(u -> u.tableName(table).key(key).updateExpression("ADD #n :one")
                                    .conditionExpression("attribute_not_exists(#n) OR #n <> :never")
                                    .expressionAttributeNames(names).expressionAttributeValues(values));
                        } catch (SdkException e) {
                            throw new StoreException("UpdateItem failed: " + e.getMessage(), e);
                        }
                    }

                    @Override
                    public void close() {
                        client.close();
                    }
                };
            }

            @Override
            void cleanUp() {
                try (DynamoDbClient client = dynamoClient(endpoint)) {
                    client.deleteTable(d -> d.tableName(table));
                    LOG.info("deleted DynamoDB table {}", table);
                } catch (ResourceNotFoundException e) {
                    LOG.info("DynamoDB table {} was never created", table);
                }
            }
        };
    }

    private static DynamoDbClient dynamoClient(String endpoint) {
        return DynamoDbClient.builder()
                .endpointOverride(URI.create(endpoint))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create("bench", "bench")))
                .httpClientBuilder(UrlConnectionHttpClient.builder())
                .build();
    }
}
