package dev.redeye.store.dynamodb;

import dev.redeye.api.BreakerState;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import dev.redeye.tck.StoreTck;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The full redeye TCK on dynalite: every client opened through the URI provider (as {@code Stores.open}
 * does), each with its own {@code DynamoDbClient}, in a table of this class's own (created on demand by the
 * first client, deleted afterwards). Every hook is provided: {@link #corrupt} writes a state map no
 * {@code BreakerState} can come from with a plain client; {@link #interruptFeed} makes the client's feed poller
 * fail its next read, which is what a dropped connection does to a polled feed (there is no long-lived feed
 * connection to cut); {@link #rewind} writes an earlier state back with a plain client.
 */
class DynamoDbStoreTckTest extends StoreTck {
    private static final String TABLE = DynamoTestSupport.newTable("redeye_tck");

    @AfterAll
    static void dropTable() {
        DynamoTestSupport.deleteTable(TABLE);
    }

    /**
     * Feed polls 100 ms apart, not the default 500 ms, only to keep the suite short: many rules wait for an
     * event, and at 500 ms the whole TCK takes about 40 s longer on dynalite (it passes either way). The
     * default interval's promptness (R6.10: within 1 s) is proven by
     * {@code DynamoDbStoreTest.atTheDefaultPollIntervalEveryTransitionReachesAnotherClientWithinOneSecond}.
     */
    @Override
    protected Store newClient() {
        return new DynamoDbStoreProvider().open(DynamoTestSupport.uri(TABLE, "createTable=true&feedPollMillis=100"));
    }

    @Override
    protected void corrupt(Store client, String key) {
        try (DynamoDbClient raw = DynamoTestSupport.rawClient()) {
            raw.updateItem(u -> u.tableName(TABLE).key(Items.key(Keys.partitionKey(key)))
                    .updateExpression("SET #st = :st")
                    .expressionAttributeNames(Map.of("#st", Items.STATE))
                    .expressionAttributeValues(Map.of(":st", AttributeValue.builder().m(Map.of(
                            "failures", Items.s("many"), "open", Items.s("perhaps"))).build())));
        }
    }

    /** R6.12: the state, version and layout attributes written back as {@code state}, bypassing the store. */
    @Override
    protected void rewind(Store client, String key, BreakerState state) {
        try (DynamoDbClient raw = DynamoTestSupport.rawClient()) {
            raw.updateItem(u -> u.tableName(TABLE).key(Items.key(Keys.partitionKey(key)))
                    .updateExpression("SET #st = :st, #v = :v, #lay = :lay")
                    .expressionAttributeNames(Map.of("#st", Items.STATE, "#v", Items.VERSION, "#lay", Items.LAYOUT))
                    .expressionAttributeValues(Map.of(":st", Items.encodeState(state), ":v",
                            Items.n(state.version()), ":lay", Items.n(Items.layoutOf(state)))));
        }
    }

    @Override
    protected void interruptFeed(Store client) {
        ((DynamoDbStore) client).interruptFeed();
    }

    @Override
    protected Set<Class<?>> expectedCapabilities() {
        return Set.of(AtomicUpdates.class, TrialClaims.class, TransitionFeed.class, QuorumState.class,
                OperationListing.class, OutcomeBatches.class);
    }
}
