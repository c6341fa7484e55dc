package dev.redeye.store.dynamodb;

import dev.redeye.api.StoreException;
import dev.redeye.spi.OperationListing;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

/**
 * The {@link OperationListing} of a {@link DynamoDbStore}: one strongly consistent {@code Scan} of the table per
 * page, with {@code Limit} the page's limit and the cursor the {@code LastEvaluatedKey} of the page before. A
 * filter keeps the operations' items that hold a state ({@code pk} of {@code o#} or {@code h#}, an {@code st}
 * attribute): feed items, tombstones and items holding only claims are read (and billed: {@code Scan} bills what
 * it evaluates, filtered or not) but not returned. Expiry is judged on the items it returns as {@code get} judges
 * it ({@link Items#decode}, the store's clock, a pinned state never expires), so an expired state is not listed.
 *
 * <p>{@code Limit} bounds the items a page evaluates, so a page holds at most {@code limit} entries and often
 * fewer, none included, before the end. Consistent reads, so that a state written before the listing started is
 * in it: 1 read unit per 4 KB of the items a page evaluates (their sizes summed, rounded up once per page).
 *
 * <p>The cursor is {@code d1~} and the base64url of the last evaluated partition key; a key deleted behind it does
 * not move it, since {@code Scan} resumes after the key itself. Thread-safe: it keeps no state between pages.
 */
final class Listing {
    private static final String VERSION = "d1~";
    private static final String FILTER = "attribute_exists(#st) AND (begins_with(#pk, :o) OR begins_with(#pk, :h))";

    private final Requests requests;
    private final Clock clock;
    private final String table;

    Listing(Requests requests, Clock clock, String table) {
        this.requests = requests;
        this.clock = clock;
        this.table = table;
    }

    OperationListing.Page page(String cursor, int limit) {
        OperationListing.checkLimit(limit);
        Map<String, AttributeValue> start = cursor == null ? null : Items.key(parse(cursor));
        requests.ensureOpen();
        ScanRequest.Builder b = ScanRequest.builder().limit(limit).consistentRead(true).filterExpression(FILTER)
                .expressionAttributeNames(Map.of("#st", Items.STATE, "#pk", Items.PK))
                .expressionAttributeValues(Map.of(":o", Items.s(Keys.VERBATIM), ":h", Items.s(Keys.HASHED)));
        if (start != null) {
            b.exclusiveStartKey(start);
        }
        ScanResponse r = requests.scan("scan", b, requests.deadline());
        long now = clock.millis();
        List<OperationListing.Entry> out = new ArrayList<>(r.count());
        for (Map<String, AttributeValue> item : r.items()) {
            OperationListing.Entry e = entry(item, now);
            if (e != null) {
                out.add(e);
            }
        }
        Map<String, AttributeValue> last = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty()
                ? r.lastEvaluatedKey() : null;
        String next = null;
        if (last != null) {
            AttributeValue pk = last.get(Items.PK);
            if (pk == null || pk.s() == null) {
                throw new StoreException("DynamoDB scan of table " + table + " returned a last evaluated key "
                        + "without a string 'pk': " + last.keySet());
            }
            next = VERSION + Base64.getUrlEncoder().withoutPadding().encodeToString(
                    pk.s().getBytes(StandardCharsets.UTF_8));
        }
        return new OperationListing.Page(out, next);
    }

    /**
     * The entry of an operation's item holding a live state, or null: an expired state, an item whose name does not
     * give its key (not written by redeye). A malformed item is listed without a state: {@code get} then says why.
     */
    private OperationListing.Entry entry(Map<String, AttributeValue> item, long now) {
        AttributeValue op = item.get(Items.OP);
        AttributeValue pk = item.get(Items.PK);
        if (op == null || op.s() == null || pk == null || pk.s() == null) {
            return null;
        }
        String name = op.s();
        try {
            if (!Keys.partitionKey(name).equals(pk.s())) {
                return null;
            }
        } catch (IllegalArgumentException notAName) {
            return null;
        }
        try {
            Items.Stored stored = Items.decode(item, name, now, table);
            return stored.live() == null ? null : new OperationListing.Entry(name, stored.live());
        } catch (StoreException malformed) {
            return OperationListing.Entry.nameOnly(name);
        }
    }

    private static String parse(String cursor) {
        if (cursor.startsWith(VERSION)) {
            try {
                String pk = new String(Base64.getUrlDecoder().decode(cursor.substring(VERSION.length())),
                        StandardCharsets.UTF_8);
                if (!pk.isEmpty() && pk.getBytes(StandardCharsets.UTF_8).length <= Keys.MAX_PARTITION_KEY_BYTES) {
                    return pk;
                }
            } catch (IllegalArgumentException notBase64) {
                // refused below
            }
        }
        throw new IllegalArgumentException("not a cursor of this store's listings: "
                + (cursor.length() <= 40 ? cursor : cursor.substring(0, 40) + "..."));
    }
}
