package dev.redeye.store.dynamodb;

import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import dev.redeye.spi.support.Backoff;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * The requests the store makes ({@code GetItem}, {@code UpdateItem}, and the listing's {@code Scan}), with what
 * every call needs: the
 * closed check, the call's deadline, the mapping of SDK failures to {@link StoreException}, and the count of
 * requests and consumed capacity units ({@link DynamoDbStore#usage()}). Thread-safe.
 *
 * <p><b>Deadlines</b>: each store call takes a deadline ({@link #deadline()}, on {@link System#nanoTime()}) and
 * passes it to every request it makes. A request is not sent once the deadline has passed, and is sent with the
 * SDK's {@code apiCallTimeout} lowered to the time left when that is shorter than the client's own, so that the
 * SDK abandons it (and its retries) at the deadline; a pause between conditional attempts ends there too. So a
 * call ends by its deadline whatever its number of requests and whatever the client's timeouts.
 */
final class Requests {
    /** The deadline of requests no caller waits for (the feed poller's): only the client's timeouts bound them. */
    static final long NO_DEADLINE = Long.MAX_VALUE;
    /** The most of a call's time kept back from the feed-head write for counting its event as lost. */
    private static final long LOST_COUNT_RESERVE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private final DynamoDbClient client;
    private final String table;
    private final AtomicBoolean closed;
    private final long deadlineNanos;
    /** The client's own {@code apiCallTimeout} in ns, or {@link Long#MAX_VALUE} when it has none. */
    private final long clientCallTimeoutNanos;
    private final LongAdder requests = new LongAdder();
    private final LongAdder conditionFailures = new LongAdder();
    private final DoubleAdder readUnits = new DoubleAdder();
    private final DoubleAdder writeUnits = new DoubleAdder();
    private final AtomicInteger mostAttempts = new AtomicInteger();

    Requests(DynamoDbClient client, String table, AtomicBoolean closed, Duration callDeadline) {
        this.client = client;
        this.table = table;
        this.closed = closed;
        this.deadlineNanos = callDeadline.toNanos();
        this.clientCallTimeoutNanos = client.serviceClientConfiguration().overrideConfiguration().apiCallTimeout()
                .map(Duration::toNanos).orElse(Long.MAX_VALUE);
    }

    /** The deadline of a store call that starts now. */
    long deadline() {
        return System.nanoTime() + deadlineNanos;
    }

    /**
     * The deadline of a transition's feed-head write: the call's deadline less a reserve (a quarter of the call
     * deadline, at most 250 ms), so that an event that could not be appended in time can still be counted as
     * lost, which tells subscribers of the gap, before the call's own deadline.
     */
    long beforeLostCount(long deadline) {
        return deadline == NO_DEADLINE ? NO_DEADLINE
                : deadline - Math.min(LOST_COUNT_RESERVE_NANOS, deadlineNanos / 4);
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
    Map<String, AttributeValue> get(String call, String name, String partitionKey, long deadline) {
        return get(call, name, partitionKey, deadline, true);
    }

    /**
     * A {@code GetItem} of one item, strongly consistent or not: an eventually consistent read costs half the
     * read capacity and may return an earlier version of the item (never a mix of two versions).
     *
     * @return the item, or null when there is none
     */
    Map<String, AttributeValue> get(String call, String name, String partitionKey, long deadline, boolean consistent) {
        GetItemResponse r = run(call, name, deadline, cut -> client.getItem(g -> {
            g.tableName(table).key(Items.key(partitionKey)).consistentRead(consistent)
                    .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL);
            if (cut != null) {
                g.overrideConfiguration(o -> o.apiCallTimeout(cut));
            }
        }));
        count(r.consumedCapacity(), true);
        return r.hasItem() && !r.item().isEmpty() ? r.item() : null;
    }

    /** One {@code Scan} request of the table (one page of it), its capacity counted as reads. */
    ScanResponse scan(String call, ScanRequest.Builder request, long deadline) {
        request.tableName(table).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL);
        ScanResponse r = run(call, null, deadline, cut -> client.scan(cut == null ? request.build()
                : request.overrideConfiguration(o -> o.apiCallTimeout(cut)).build()));
        count(r.consumedCapacity(), true);
        return r;
    }

    /**
     * An {@code UpdateItem}.
     *
     * @return false when its condition failed ({@code ConditionalCheckFailedException}), true when it was written
     */
    boolean update(String call, String name, UpdateItemRequest.Builder request, long deadline) {
        request.tableName(table).returnConsumedCapacity(ReturnConsumedCapacity.TOTAL);
        try {
            UpdateItemResponse r = run(call, name, deadline, cut -> client.updateItem(cut == null ? request.build()
                    : request.overrideConfiguration(o -> o.apiCallTimeout(cut)).build()));
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

    /**
     * Sends one request unless the deadline has passed; {@code body} gets the SDK call timeout to set on it, or
     * null to keep the client's.
     */
    private <T> T run(String call, String name, long deadline, Function<Duration, T> body) {
        ensureOpen();
        Duration cut = null;
        if (deadline != NO_DEADLINE) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new StoreException(what(call, name) + " was not sent: the store call's deadline of "
                        + TimeUnit.NANOSECONDS.toMillis(deadlineNanos) + " ms (callDeadline) has passed");
            }
            if (left < clientCallTimeoutNanos) {
                cut = Duration.ofNanos(left);
            }
        }
        requests.increment();
        try {
            return body.apply(cut);
        } catch (ConditionalCheckFailedException e) {
            throw new StoreException("condition failed", e); // unwrapped by update()
        } catch (ApiCallTimeoutException e) {
            if (cut == null) {
                throw Errors.wrap(call, name, table, e);
            }
            throw new StoreException(what(call, name) + " timed out at the store call's deadline of "
                    + TimeUnit.NANOSECONDS.toMillis(deadlineNanos) + " ms (callDeadline); a write may still have"
                    + " been applied", e);
        } catch (SdkException e) {
            throw Errors.wrap(call, name, table, e);
        } catch (RuntimeException e) {
            // The SDK wraps almost everything, but a closed client throws IllegalStateException.
            throw new StoreException(what(call, name) + " failed: " + e, e);
        }
    }

    private String what(String call, String name) {
        return "DynamoDB " + call + (name == null ? "" : " of '" + OperationNames.abbreviate(name) + "'") + " on table " + table;
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
     * in {@code [0, min(capMillis, 2^attempt)]} ms, so that racing writers spread out instead of colliding again;
     * never past the call's deadline (the next request then reports it).
     */
    static void backoff(int attempt, long capMillis, long deadline) {
        new Backoff(Duration.ofMillis(Math.min(2, capMillis)), Duration.ofMillis(capMillis)).pause(attempt,
                deadline == NO_DEADLINE ? Backoff.NO_DEADLINE : deadline, "a DynamoDB conditional write");
    }
}
