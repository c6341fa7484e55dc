package dev.redeye.spring.boot;

import dev.redeye.CircuitBreakerObserver.CallTiming;
import dev.redeye.OpenMode;
import dev.redeye.micrometer.MeterNaming; // an enum with no Micrometer type: loads without Micrometer
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Everything under {@code redeye.*}: the store, the options every breaker shares, the named breakers, and the
 * options of a store built over an application's own client bean.
 *
 * <pre>
 * redeye.store=redis://127.0.0.1:6379?prefix=checkout:
 * redeye.defaults.failure-threshold=5
 * redeye.defaults.reset-timeout=30s
 * redeye.breakers.payments.failure-threshold=3
 * redeye.breakers.payments.store-error-policy=reject
 * </pre>
 *
 * A plain mutable bean, as Spring's binder needs; read once at start.
 */
@ConfigurationProperties("redeye")
public class RedeyeProperties {

    /** Whether redeye's auto-configuration is on. */
    private boolean enabled = true;

    /**
     * URI of the shared store, for example redis://host:6379?prefix=app: or postgresql://host/db?schema=redeye
     * (the scheme's store module must be on the class path). Unset: local mode, each instance keeps its own
     * state in memory. With a client bean of a store module (JedisPooled, DataSource, HazelcastInstance,
     * DynamoDbClient) it may name just the scheme (redis:) to choose among several.
     */
    private String store;

    /**
     * How redeye.store is opened. lazy (the default): a store that cannot be reached does not fail the start;
     * it connects on first use and retries in the background, and meanwhile every breaker follows its
     * store-error-policy (the health is DOWN). strict: the store is reached before the breakers are built, and
     * the start fails if it cannot be.
     */
    private OpenMode storeOpenMode = OpenMode.LAZY;

    /** Options every breaker starts from. */
    @NestedConfigurationProperty
    private final BreakerProperties defaults = new BreakerProperties();

    /**
     * Named breakers, each overriding the defaults option by option (redeye.breakers.payments.failure-threshold).
     * Each is a CircuitBreaker bean qualified after its name (@Qualifier("payments")) and named
     * redeyeCircuitBreaker.payments; the name "default" configures the default breaker.
     */
    private final Map<String, BreakerProperties> breakers = new LinkedHashMap<>();

    /** Options of a Redis store built over the application's UnifiedJedis (JedisPooled, JedisCluster) bean. */
    private final Redis redis = new Redis();

    /** Options of a PostgreSQL store built over the application's DataSource bean. */
    private final Postgres postgres = new Postgres();

    /** Options of a Hazelcast store built over the application's HazelcastInstance bean. */
    private final Hazelcast hazelcast = new Hazelcast();

    /** Options of a DynamoDB store built over the application's DynamoDbClient bean. */
    private final DynamoDb dynamodb = new DynamoDb();

    /** Micrometer meters of every breaker (with Micrometer on the class path and a MeterRegistry bean). */
    private final Metrics metrics = new Metrics();

    /** The @CircuitBreakerGuarded annotation. */
    private final Annotation annotation = new Annotation();

    /** The redeyeevents Actuator endpoint's buffer. */
    private final Events events = new Events();

    /** The opt-in live page of the fleet, the Actuator endpoint redeyedashboard (with redeye-dashboard). */
    private final Dashboard dashboard = new Dashboard();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getStore() {
        return store;
    }

    public void setStore(String store) {
        this.store = store;
    }

    public OpenMode getStoreOpenMode() {
        return storeOpenMode;
    }

    public void setStoreOpenMode(OpenMode storeOpenMode) {
        this.storeOpenMode = storeOpenMode;
    }

    public BreakerProperties getDefaults() {
        return defaults;
    }

    public Map<String, BreakerProperties> getBreakers() {
        return breakers;
    }

    public Redis getRedis() {
        return redis;
    }

    public Postgres getPostgres() {
        return postgres;
    }

    public Hazelcast getHazelcast() {
        return hazelcast;
    }

    public DynamoDb getDynamodb() {
        return dynamodb;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    public Annotation getAnnotation() {
        return annotation;
    }

    public Events getEvents() {
        return events;
    }

    public Dashboard getDashboard() {
        return dashboard;
    }

    /** The transitions the {@code redeyeevents} Actuator endpoint keeps. */
    public static class Dashboard {

        /** How often the whole store is read again, for counters that change without a transition. */
        private java.time.Duration refresh = java.time.Duration.ofSeconds(5);

        /** Whether operators may force open, half-open and reset from the page (secured as the endpoint is). */
        private boolean actions;

        /** The operations to show when the store cannot list them (one without {@code OperationListing}). */
        private java.util.List<String> operations = new java.util.ArrayList<>();

        public java.time.Duration getRefresh() {
            return refresh;
        }

        public void setRefresh(java.time.Duration refresh) {
            this.refresh = refresh;
        }

        public boolean isActions() {
            return actions;
        }

        public void setActions(boolean actions) {
            this.actions = actions;
        }

        public java.util.List<String> getOperations() {
            return operations;
        }

        public void setOperations(java.util.List<String> operations) {
            this.operations = operations;
        }
    }

    public static class Events {

        /** How many transitions (this instance's and the fleet's, all breakers together) are kept; at least 1. */
        private int bufferSize = 100;

        public int getBufferSize() {
            return bufferSize;
        }

        public void setBufferSize(int bufferSize) {
            this.bufferSize = bufferSize;
        }
    }

    /** The @CircuitBreakerGuarded annotation's support. */
    public static class Annotation {

        /** Whether beans with @CircuitBreakerGuarded methods are proxied so the methods run through a breaker. */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** Redis store options for a client bean (a URI carries its own in its query). */
    public static class Redis {

        /** Prefix of every key, for example "checkout:". Default empty. */
        private String prefix;

        public String getPrefix() {
            return prefix;
        }

        public void setPrefix(String prefix) {
            this.prefix = prefix;
        }
    }

    /** PostgreSQL store options for a DataSource bean. */
    public static class Postgres {

        /** Schema of the tables. Default public. */
        private String schema;

        /** Name of the state table (claims and events tables are named after it). Default redeye_breakers. */
        private String table;

        /**
         * Whether missing tables and indexes are created at start (default true); false only checks them and fails
         * naming the DDL to run (for schemas a migration tool owns).
         */
        private Boolean createSchema;

        public String getSchema() {
            return schema;
        }

        public void setSchema(String schema) {
            this.schema = schema;
        }

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = table;
        }

        public Boolean getCreateSchema() {
            return createSchema;
        }

        public void setCreateSchema(Boolean createSchema) {
            this.createSchema = createSchema;
        }
    }

    /** Hazelcast store options for a HazelcastInstance bean. */
    public static class Hazelcast {

        /** Name of the map holding each operation's state and trial claims. Default redeye. */
        private String map;

        public String getMap() {
            return map;
        }

        public void setMap(String map) {
            this.map = map;
        }
    }

    /** DynamoDB store options for a DynamoDbClient bean. */
    public static class DynamoDb {

        /** Name of the table. Default redeye_breakers. */
        private String table;

        /** Whether a missing table is created at start (on-demand capacity). Default false. */
        private Boolean createTable;

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = table;
        }

        public Boolean getCreateTable() {
            return createTable;
        }

        public void setCreateTable(Boolean createTable) {
            this.createTable = createTable;
        }
    }

    /** Micrometer binding options. */
    public static class Metrics {

        /** Whether breakers' meters are bound to the application's MeterRegistry. */
        private boolean enabled = true;

        /**
         * How call durations are timed: sampled (default: at most one call per operation every 10 ms),
         * every-call (exact totals, two clock reads per call) or none.
         */
        private CallTiming callTiming = CallTiming.SAMPLED;

        /**
         * The meters' names: redeye (default: redeye.circuitbreaker.*) or resilience4j
         * (resilience4j.circuitbreaker.* with Resilience4j's tags and units, for dashboards built for
         * Resilience4j, its Grafana dashboard among them).
         */
        private MeterNaming naming = MeterNaming.REDEYE;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public CallTiming getCallTiming() {
            return callTiming;
        }

        public void setCallTiming(CallTiming callTiming) {
            this.callTiming = callTiming;
        }

        public MeterNaming getNaming() {
            return naming;
        }

        public void setNaming(MeterNaming naming) {
            this.naming = naming;
        }
    }
}
