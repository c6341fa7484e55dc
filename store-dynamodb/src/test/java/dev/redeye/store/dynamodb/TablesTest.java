package dev.redeye.store.dynamodb;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.StoreException;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.MultiRegionConsistency;
import software.amazon.awssdk.services.dynamodb.model.ReplicaDescription;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;

/**
 * The Global Table decision at open. dynalite has no replicas, and no DescribeTable answer with replicas can
 * be had from it, so the decision ({@link Tables#checkReplication}) is a pure function over the
 * {@link TableDescription} the SDK parses, tested here on descriptions built with the SDK's own model; the real
 * open path is tested on dynalite, whose tables have no replicas and open.
 */
class TablesTest {

    private static TableDescription replicated(MultiRegionConsistency consistency, String... regions) {
        TableDescription.Builder b = TableDescription.builder().tableName("t").globalTableVersion("2019.11.21");
        ReplicaDescription[] r = new ReplicaDescription[regions.length];
        for (int i = 0; i < regions.length; i++) {
            r[i] = ReplicaDescription.builder().regionName(regions[i]).replicaStatus("ACTIVE").build();
        }
        b.replicas(r);
        return consistency == null ? b.build() : b.multiRegionConsistency(consistency).build();
    }

    @Test
    void aTableWithoutReplicasIsSingleRegion() {
        TableDescription plain = TableDescription.builder().tableName("t").build();
        assertEquals(Tables.Replication.SINGLE_REGION, Tables.replication(plain));
        assertDoesNotThrow(() -> Tables.checkReplication(plain, "t", false));
        // A current-version table whose replicas were all removed lists none: one region again.
        TableDescription former = TableDescription.builder().tableName("t").globalTableVersion("2019.11.21").build();
        assertEquals(Tables.Replication.SINGLE_REGION, Tables.replication(former));
    }

    @Test
    void eventuallyConsistentReplicasAreRefusedWithTheReasonUnlessAllowed() {
        for (TableDescription d : new TableDescription[] {
            replicated(MultiRegionConsistency.EVENTUAL, "eu-west-1", "us-east-1"),
            replicated(null, "eu-west-1"), // consistency not reported: the default, eventual
        }) {
            assertEquals(Tables.Replication.EVENTUAL, Tables.replication(d));
            StoreException e = assertThrows(StoreException.class, () -> Tables.checkReplication(d, "breakers", false));
            assertTrue(e.getMessage().contains("breakers"), e.getMessage());
            assertTrue(e.getMessage().contains("eu-west-1"), e.getMessage());
            assertTrue(e.getMessage().contains("atomic only within its region"), e.getMessage());
            assertTrue(e.getMessage().contains("allowGlobalTable"), e.getMessage());
            assertDoesNotThrow(() -> Tables.checkReplication(d, "breakers", true));
        }
    }

    @Test
    void aLegacyGlobalTableIsRefusedThoughDescribeTableListsNoReplicas() {
        TableDescription legacy = TableDescription.builder().tableName("t").globalTableVersion("2017.11.29").build();
        assertEquals(Tables.Replication.EVENTUAL, Tables.replication(legacy));
        StoreException e = assertThrows(StoreException.class, () -> Tables.checkReplication(legacy, "t", false));
        assertTrue(e.getMessage().contains("2017.11.29"), e.getMessage());
    }

    @Test
    void stronglyConsistentReplicasAreAccepted() {
        TableDescription strong = replicated(MultiRegionConsistency.STRONG, "us-east-1", "us-east-2", "us-west-2");
        assertEquals(Tables.Replication.STRONG, Tables.replication(strong));
        assertDoesNotThrow(() -> Tables.checkReplication(strong, "t", false));
    }

    @Test
    void onDynaliteTheRealDescriptionHasNoReplicasAndTheStoreOpensWithoutTheOptIn() {
        String table = DynamoTestSupport.newTable("redeye_tables");
        try (DynamoDbClient c = DynamoTestSupport.rawClient()) {
            DynamoDbStore.builder(c).table(table).createTable(true).build().close();
            TableDescription real = c.describeTable(r -> r.tableName(table)).table();
            assertEquals(Tables.Replication.SINGLE_REGION, Tables.replication(real));
            try (DynamoDbStore store = DynamoDbStore.builder(c).table(table).allowGlobalTable(false).build()) {
                assertTrue(store.get("op").isEmpty());
            }
        } finally {
            DynamoTestSupport.deleteTable(table);
        }
    }
}
