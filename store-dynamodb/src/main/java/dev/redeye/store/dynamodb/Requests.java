package dev.redeye.store.dynamodb;

import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * The two requests the store makes ({@code GetItem} and {@code UpdateItem}), with what every call needs: the
 * closed check, the mapping of SDK failures to {@link StoreException}, and the count of requests and consumed
 * capacity units ({@link DynamoDbStore#usage()}). Thread-safe.
 */
final class Requests {
    private final DynamoDbClient client;
    private final String table;
    private final AtomicBoolean closed;
    private final LongAdder requests = new LongAdder();
    private final LongAdder conditionFailures = new LongAdder();
    private final DoubleAdder readUnits = new DoubleAdder();
    private final DoubleAdder writeUnits = new DoubleAdder();
    private final java.util.concurrent.atomic.AtomicInteger mostAttempts = new java.util.concurrent.atomic.AtomicInteger();

    Requests(DynamoDbClient client, String table, AtomicBoolean closed) {
        this.client = client;
        this.table = table;
        this.closed = closed;
    }

    String table() {
        return table;
    }

    void ensureOpen() {
        if (closed.get()) {
            throw new StoreException("DynamoDbStore on table " + table + " is closed");
        }
    }

    /**
     * A strongly consistent {@code GetItem} of one item.
     *
     * @return the item, or null when there is none
     */
    Map<String, AttributeValue> get(String call, String name, String partitionKey) {
        GetItemResponse r = run(call, name, () -> client.getItem(g -> g.tableName(table).key(Items.key(partitionKey))
                .consistentRead(true).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL)));
        count(r.consumedCapacity(), true);
        return r.hasItem() && !r.item().isEmpty() ? r.item() : null;
    }

    /**
     * An {@code UpdateItem}.
     *
     * @return false when its condition failed ({@code ConditionalCheckFailedException}), true when it was written
     */
    boolean update(String call, String name, UpdateItemRequest.Builder request) {
        UpdateItemRequest req = request.tableName(table).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL).build();
        try {
            UpdateItemResponse r = run(call, name, () -> client.updateItem(req));
            count(r.consumedCapacity(), false);
            return true;
        } catch (StoreException e) {
            if (e.getCause() instanceof ConditionalCheckFailedException) {
                conditionFailures.increment();
                // A failed condition is billed like the write it would have been (DynamoDB documents this).
                return false;
            }
            throw e;
        }
    }

    private <T> T run(String call, String name, Supplier<T> body) {
        ensureOpen();
        requests.increment();
        try {
            return body.get();
        } catch (ConditionalCheckFailedException e) {
            throw new StoreException("condition failed", e); // unwrapped by update()
        } catch (SdkException e) {
            throw Errors.wrap(call, name, table, e);
        } catch (RuntimeException e) {
            // The SDK wraps almost everything, but a closed client throws IllegalStateException.
            throw new StoreException("DynamoDB " + call + (name == null ? "" : " of '" + OperationNames.abbreviate(name) + "'")
                    + " on table " + table + " failed: " + e, e);
        }
    }

    private void count(ConsumedCapacity c, boolean read) {
        if (c == null || c.capacityUnits() == null) {
            return;
        }
        (read ? readUnits : writeUnits).add(c.capacityUnits());
    }

    /** Records that a compare-and-set call needed {@code attempts} conditional writes. */
    void attempts(int attempts) {
        mostAttempts.accumulateAndGet(attempts, Math::max);
    }

    DynamoDbStore.Usage usage() {
        return new DynamoDbStore.Usage(requests.sum(), readUnits.sum(), writeUnits.sum(), conditionFailures.sum(),
                mostAttempts.get());
    }

    /**
     * Waits before attempt {@code attempt + 1} of a compare-and-set that lost its condition: full jitter, random
     * in {@code [0, min(capMillis, 2^attempt)]} ms, so that racing writers spread out instead of colliding again.
     */
    static void backoff(int attempt, long capMillis) {
        long bound = Math.min(capMillis, 1L << Math.min(attempt, 20));
        long pause = ThreadLocalRandom.current().nextLong(bound + 1);
        if (pause == 0) {
            Thread.onSpinWait();
            return;
        }
        try {
            Thread.sleep(pause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("interrupted while retrying a DynamoDB conditional write", e);
        }
    }
}
