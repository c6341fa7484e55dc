package dev.redeye.store.dynamodb;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * Counts the {@code GetItem} and {@code UpdateItem} requests a {@code DynamoDbClient} sends, per partition key and,
 * for reads, per consistency: an SDK {@link ExecutionInterceptor} added to a real client talking to dynalite.
 * Every request the store makes through the client passes here once (SDK retries of one request count once).
 */
final class GetItemCounter implements ExecutionInterceptor {
    private final Map<String, LongAdder> reads = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> consistentReads = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> writes = new ConcurrentHashMap<>();
    private final java.util.Queue<Long> readTimes = new java.util.concurrent.ConcurrentLinkedQueue<>();

    @Override
    public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
        if (context.request() instanceof GetItemRequest g) {
            String pk = g.key().get(Items.PK).s();
            reads.computeIfAbsent(pk, k -> new LongAdder()).increment();
            readTimes.add(System.nanoTime());
            if (Boolean.TRUE.equals(g.consistentRead())) {
                consistentReads.computeIfAbsent(pk, k -> new LongAdder()).increment();
            }
        } else if (context.request() instanceof UpdateItemRequest u) {
            writes.computeIfAbsent(u.key().get(Items.PK).s(), k -> new LongAdder()).increment();
        }
    }

    /** GetItem requests per partition key so far. */
    Map<String, Long> reads() {
        return snapshot(reads);
    }

    /** Strongly consistent GetItem requests per partition key so far. */
    Map<String, Long> consistentReads() {
        return snapshot(consistentReads);
    }

    /** UpdateItem requests per partition key so far. */
    Map<String, Long> writes() {
        return snapshot(writes);
    }

    /** When each GetItem was sent ({@link System#nanoTime()}), in order. */
    java.util.List<Long> readTimes() {
        return java.util.List.copyOf(readTimes);
    }

    void reset() {
        readTimes.clear();
        reads.clear();
        consistentReads.clear();
        writes.clear();
    }

    private static Map<String, Long> snapshot(Map<String, LongAdder> m) {
        Map<String, Long> s = new TreeMap<>();
        m.forEach((k, v) -> s.put(k, v.sum()));
        return s;
    }
}
