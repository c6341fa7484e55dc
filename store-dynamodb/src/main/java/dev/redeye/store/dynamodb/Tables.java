package dev.redeye.store.dynamodb;

import dev.redeye.api.StoreException;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.MultiRegionConsistency;
import software.amazon.awssdk.services.dynamodb.model.ReplicaDescription;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

/**
 * Checks the store's table at start (its key schema, and whether it is a Global Table whose conditional writes
 * are atomic only within a region), and creates it on demand (on-demand billing) when asked to.
  *
 * <p>These are a new client's first requests, and a first request is slow: it loads and initialises much
 * of the SDK (650-1,300 ms measured for a DescribeTable on a loaded 2-core machine), and an endpoint may be
 * slow to answer a new client. The store's per-call budget (1 s per call and 250 ms per attempt from a URI)
 * is sized for warm calls, so these requests get their own: {@link #OPEN_CALL_TIMEOUT} per call and
 * {@link #OPEN_ATTEMPT_TIMEOUT} per attempt (a cold attempt that overruns it is retried warm). An endpoint that
 * accepts connections and never answers therefore holds an open for that budget, not for the 1 s of a
 * call.
 */
final class Tables {
    private static final Logger LOG = LoggerFactory.getLogger(Tables.class);
    /** The budget of each request that checks or creates the table at start, retries included. */
    static final Duration OPEN_CALL_TIMEOUT = Duration.ofSeconds(5);
    /** The budget of one attempt of such a request. */
    static final Duration OPEN_ATTEMPT_TIMEOUT = Duration.ofSeconds(2);
    private static final AwsRequestOverrideConfiguration OPENING = AwsRequestOverrideConfiguration.builder()
            .apiCallTimeout(OPEN_CALL_TIMEOUT).apiCallAttemptTimeout(OPEN_ATTEMPT_TIMEOUT).build();
    private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z0-9_.-]{3,255}");
    /** How long a new table may stay CREATING before the store gives up (dynalite with --createTableMs 0: none). */
    private static final long CREATE_WAIT_MILLIS = 60_000;
    /** The Global Tables version whose replicas DescribeTable lists; the legacy one's it does not. */
    private static final String CURRENT_GLOBAL_TABLES = "2019.11.21";

    /** How a table's items are replicated across regions, as far as its {@code DescribeTable} tells. */
    enum Replication {
        /** No replica: every conditional write is decided in one place. */
        SINGLE_REGION,
        /** Replicas with multi-Region strong consistency: a conditional write is decided across the regions. */
        STRONG,
        /** Replicas with multi-Region eventual consistency (the default), or of the legacy version. */
        EVENTUAL
    }

    private Tables() {
    }

    /**
     * Validates a table name (DynamoDB's rule).
     *
     * @throws IllegalArgumentException naming the option when the name is not 3 to 255 of {@code [A-Za-z0-9_.-]}
     */
    static String validate(String table) {
        if (table == null || !TABLE_NAME.matcher(table).matches()) {
            throw new IllegalArgumentException("table must be 3 to 255 characters of A-Z a-z 0-9 _ . -, was "
                    + (table == null ? "null" : "'" + table + "'"));
        }
        return table;
    }

    /**
     * Makes sure the table exists with the expected key, creating it when {@code create} is set.
     *
     * @throws StoreException if it is missing and {@code create} is off (the message has the create command),
     *                        has another key schema, or DynamoDB fails
     */
    static void ensure(DynamoDbClient client, String table, boolean create, boolean allowGlobalTable) {
        TableDescription d = describe(client, table);
        if (d == null) {
            if (!create) {
                throw new StoreException("DynamoDB store: " + Errors.missingTable(table));
            }
            d = create(client, table);
        }
        checkKeySchema(d, table);
        checkReplication(d, table, allowGlobalTable);
    }

    /** How the described table is replicated. */
    static Replication replication(TableDescription d) {
        String version = d.globalTableVersion();
        boolean replicated = d.hasReplicas() && !d.replicas().isEmpty()
                // A legacy (2017.11.29) global table's replicas are listed by DescribeGlobalTable only.
                || version != null && !version.equals(CURRENT_GLOBAL_TABLES);
        if (!replicated) {
            return Replication.SINGLE_REGION;
        }
        return d.multiRegionConsistency() == MultiRegionConsistency.STRONG ? Replication.STRONG : Replication.EVENTUAL;
    }

    /**
     * Refuses a Global Table with eventually consistent replicas unless {@code allowGlobalTable}: there a
     * conditional write is checked against its own region's copy only, so two instances writing one breaker in
     * two regions both win, and replication keeps one of the two writes (last writer wins).
     *
     * @throws StoreException naming the replicas, the reason and the options, when refused
     */
    static void checkReplication(TableDescription d, String table, boolean allowGlobalTable) {
        Replication r = replication(d);
        if (r == Replication.SINGLE_REGION) {
            return;
        }
        String where = regions(d);
        if (r == Replication.STRONG) {
            LOG.info("DynamoDB table {} is a Global Table with multi-Region strong consistency ({}): "
                    + "conditional writes are decided across its regions", table, where);
            return;
        }
        if (allowGlobalTable) {
            LOG.warn("DynamoDB table {} is a Global Table with eventually consistent replicas ({}), accepted by "
                    + "allowGlobalTable: keep every instance of the fleet writing to one region at a time, or two "
                    + "regions' writes to one breaker will overwrite each other", table, where);
            return;
        }
        throw new StoreException("DynamoDB table " + table + " is a Global Table with eventually consistent replicas ("
                + where + "): a conditional write is atomic only within its region, so instances writing one breaker"
                + " in two regions can both win their condition and replication keeps only one of the writes (lost"
                + " failure counts, two trials for one permit, a forced state undone). Use a table of one region, or"
                + " a Global Table with multi-Region strong consistency; if every instance writes to one region at a"
                + " time (the others standing by), opt in with allowGlobalTable(true) or ?allowGlobalTable=true");
    }

    private static String regions(TableDescription d) {
        String listed = d.hasReplicas() && !d.replicas().isEmpty()
                ? d.replicas().stream().map(ReplicaDescription::regionName).collect(Collectors.joining(", "))
                : "not listed by DescribeTable";
        return "replicas: " + listed + (d.globalTableVersion() == null ? "" : "; version " + d.globalTableVersion());
    }

    private static TableDescription describe(DynamoDbClient client, String table) {
        try {
            return client.describeTable(r -> r.tableName(table).overrideConfiguration(OPENING)).table();
        } catch (ResourceNotFoundException e) {
            return null;
        } catch (SdkException e) {
            throw Errors.wrap("DescribeTable", null, table, e);
        }
    }

    private static TableDescription create(DynamoDbClient client, String table) {
        try {
            client.createTable(CreateTableRequest.builder().tableName(table)
                    .attributeDefinitions(AttributeDefinition.builder().attributeName(Items.PK)
                            .attributeType(ScalarAttributeType.S).build())
                    .keySchema(KeySchemaElement.builder().attributeName(Items.PK).keyType(KeyType.HASH).build())
                    .billingMode(BillingMode.PAY_PER_REQUEST)
                    .overrideConfiguration(OPENING)
                    .build());
            LOG.info("created DynamoDB table {} (on-demand billing)", table);
        } catch (ResourceInUseException e) {
            LOG.debug("table {} is being created by someone else; waiting for it", table);
        } catch (SdkException e) {
            throw Errors.wrap("CreateTable", null, table, e);
        }
        TableDescription d = awaitActive(client, table);
        enableGcTtl(client, table);
        return d;
    }

    /** Polls DescribeTable (no SDK waiter: its first delay is 20 s) until the table is ACTIVE. */
    private static TableDescription awaitActive(DynamoDbClient client, String table) {
        long deadline = System.nanoTime() + CREATE_WAIT_MILLIS * 1_000_000L;
        long pause = 50;
        while (true) {
            TableDescription d = describe(client, table);
            if (d != null && d.tableStatus() == TableStatus.ACTIVE) {
                return d;
            }
            if (System.nanoTime() > deadline) {
                throw new StoreException("DynamoDB table " + table + " is not ACTIVE " + CREATE_WAIT_MILLIS / 1000
                        + " s after it was created (status " + (d == null ? "missing" : d.tableStatusAsString()) + ")");
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StoreException("interrupted while waiting for DynamoDB table " + table, e);
            }
            pause = Math.min(1_000, pause * 2);
        }
    }

    /**
     * Turns on DynamoDB TTL on the {@code gc} attribute, for garbage collection only. Best effort: an endpoint
     * without TTL (dynalite) or a role without {@code dynamodb:UpdateTimeToLive} only loses the clean-up.
     */
    private static void enableGcTtl(DynamoDbClient client, String table) {
        try {
            client.updateTimeToLive(r -> r.tableName(table).overrideConfiguration(OPENING)
                    .timeToLiveSpecification(t -> t.enabled(true).attributeName(Items.GC)));
        } catch (SdkException e) {
            LOG.info("DynamoDB TTL on '{}' not enabled for table {} (old items will not be garbage collected): {}",
                    Items.GC, table, e.getMessage());
        }
    }

    private static void checkKeySchema(TableDescription d, String table) {
        List<KeySchemaElement> key = d.keySchema();
        boolean ok = key.size() == 1 && key.get(0).attributeName().equals(Items.PK)
                && key.get(0).keyType() == KeyType.HASH
                && d.attributeDefinitions().stream().anyMatch(a -> a.attributeName().equals(Items.PK)
                        && a.attributeType() == ScalarAttributeType.S);
        if (!ok) {
            throw new StoreException("DynamoDB table " + table + " has the key schema " + key + "; the redeye store"
                    + " needs a table whose only key is the partition key '" + Items.PK + "' of type S, as made by\n  "
                    + Errors.createTableCommand(table));
        }
    }
}
