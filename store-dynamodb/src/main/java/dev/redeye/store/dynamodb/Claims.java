package dev.redeye.store.dynamodb;

import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * Trial claims in the operation's own item: the map {@code cl} of token to expiry (epoch ms, the store's
 * clock). A claim's expiry is judged in the write's condition, never by DynamoDB TTL:
 *
 * <ol>
 * <li>one {@code UpdateItem} adds the token if the map holds fewer than {@code permits} entries
 * ({@code size(cl) < :permits}), live or not: the common case, one request;</li>
 * <li>when that condition fails, a consistent read counts the live claims; with {@code permits} or more
 * live, the claim is refused; otherwise one {@code UpdateItem} adds the token and removes the expired entries
 * it saw, under the condition that each of them still exists and is still expired ({@code cl.#d < :now}) and
 * that the map then holds fewer than {@code permits} other entries. A lost condition goes back to 2.</li>
 * </ol>
 *
 * One request removes at most {@value #MAX_PRUNE} expired entries (the expression stays small). When more are
 * expired and the ones left would still fill the permits, step 2 first removes a batch of them on its own
 * (under the same "still expired" condition, so it never removes a live claim) and reads again: every batch
 * makes progress, so no number of expired claims blocks a claim (TCK rule R4.11), and the batches are not
 * counted as lost conditions.
 *
 * Release is {@code REMOVE cl.#token} under {@code attribute_exists(cl.#token)}: compare-and-delete by token.
 */
final class Claims {
    private static final Pattern TOKEN = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    /** At most this many expired entries are removed by one claim (the expression stays small). */
    private static final int MAX_PRUNE = 16;

    private final Requests requests;
    private final Clock clock;
    private final int maxAttempts;
    private final long retentionSeconds;

    Claims(Requests requests, Clock clock, int maxAttempts, long retentionSeconds) {
        this.requests = requests;
        this.clock = clock;
        this.maxAttempts = maxAttempts;
        this.retentionSeconds = retentionSeconds;
    }

    Optional<String> claim(String name, String pk, int permits, long ttlMillis, long deadline) {
        String token = UUID.randomUUID().toString();
        boolean first = true;
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            long now = clock.millis();
            long exp = saturatedAdd(now, ttlMillis);
            if (first) {
                first = false;
                UpdateItemRequest.Builder fast = UpdateItemRequest.builder().key(Items.key(pk))
                        .updateExpression("SET #cl.#t = :exp")
                        .conditionExpression("size(#cl) < :permits")
                        .expressionAttributeNames(Feed.names("#cl", Items.CLAIMS, "#t", token))
                        .expressionAttributeValues(Feed.values(":exp", Items.n(exp), ":permits", Items.n(permits)));
                if (requests.update("claimTrial", name, fast, deadline)) {
                    requests.attempts(attempt);
                    return Optional.of(token);
                }
            }
            Map<String, AttributeValue> item = requests.get("claimTrial", name, pk, deadline);
            if (item != null) {
                Items.decode(item, name, now, requests.table()); // the name check; malformed data is an error
            }
            String where = "'" + OperationNames.abbreviate(name) + "' in table " + requests.table();
            Map<String, Long> claims = Items.claims(item, where);
            if (claims.containsKey(token)) {
                return Optional.of(token); // an earlier attempt landed although its answer was lost
            }
            List<String> dead = new ArrayList<>();
            int live = 0;
            int expired = 0;
            for (Map.Entry<String, Long> c : claims.entrySet()) {
                if (c.getValue() < now) {
                    expired++;
                    if (dead.size() < MAX_PRUNE) {
                        dead.add(c.getKey());
                    }
                } else {
                    live++;
                }
            }
            if (live >= permits) {
                return Optional.empty();
            }
            if (expired > dead.size() && claims.size() - dead.size() >= permits) {
                // The claim's condition cannot hold with the expired entries one request leaves: remove a
                // batch alone and read again. A batch removed is progress, not a lost condition.
                if (requests.update("claimTrial", name, prune(pk, now, dead), deadline)) {
                    attempt--;
                } else {
                    Requests.backoff(attempt, 20, deadline);
                }
                continue;
            }
            boolean written;
            if (item == null || !item.containsKey(Items.CLAIMS)) {
                written = requests.update("claimTrial", name, UpdateItemRequest.builder().key(Items.key(pk))
                        .updateExpression("SET #op = if_not_exists(#op, :op), #lay = if_not_exists(#lay, :lay), "
                                + "#cl = :cl, #gc = if_not_exists(#gc, :gc)")
                        .conditionExpression("attribute_not_exists(#cl)")
                        .expressionAttributeNames(Feed.names("#op", Items.OP, "#lay", Items.LAYOUT, "#cl", Items.CLAIMS,
                                "#gc", Items.GC))
                        .expressionAttributeValues(Feed.values(":op", Items.s(name), ":lay", Items.n(Items.LAYOUT_1),
                                ":cl", AttributeValue.builder().m(Map.of(token, Items.n(exp))).build(),
                                ":gc", Items.n(exp / 1000 + retentionSeconds))), deadline);
            } else {
                written = requests.update("claimTrial", name, pruneAndClaim(pk, token, exp, now, permits, dead),
                        deadline);
            }
            if (written) {
                requests.attempts(attempt);
                return Optional.of(token);
            }
            Requests.backoff(attempt, 20, deadline);
        }
        throw new StoreException("claimTrial of '" + OperationNames.abbreviate(name) + "' on table " + requests.table()
                + " lost its condition " + maxAttempts + " times in a row (extreme contention); no claim was made");
    }

    /** Removes the expired entries {@code dead}, under the condition that each still exists and is expired. */
    private static UpdateItemRequest.Builder prune(String pk, long now, List<String> dead) {
        Map<String, String> names = Feed.names("#cl", Items.CLAIMS);
        StringBuilder update = new StringBuilder();
        StringBuilder condition = new StringBuilder();
        for (int i = 0; i < dead.size(); i++) {
            String d = "#d" + i;
            names.put(d, dead.get(i));
            update.append(i == 0 ? "REMOVE " : ", ").append("#cl.").append(d);
            condition.append(i == 0 ? "" : " AND ").append("#cl.").append(d).append(" < :now");
        }
        return UpdateItemRequest.builder().key(Items.key(pk)).updateExpression(update.toString())
                .conditionExpression(condition.toString()).expressionAttributeNames(names)
                .expressionAttributeValues(Feed.values(":now", Items.n(now)));
    }

    private static UpdateItemRequest.Builder pruneAndClaim(String pk, String token, long exp, long now, int permits,
                                                            List<String> dead) {
        Map<String, String> names = Feed.names("#cl", Items.CLAIMS, "#t", token);
        Map<String, AttributeValue> values = Feed.values(":exp", Items.n(exp), ":limit",
                Items.n((long) permits + dead.size()));
        if (!dead.isEmpty()) {
            values.put(":now", Items.n(now)); // DynamoDB refuses a value the expressions do not use
        }
        StringBuilder update = new StringBuilder("SET #cl.#t = :exp");
        StringBuilder condition = new StringBuilder("size(#cl) < :limit");
        for (int i = 0; i < dead.size(); i++) {
            String d = "#d" + i;
            names.put(d, dead.get(i));
            update.append(i == 0 ? " REMOVE " : ", ").append("#cl.").append(d);
            condition.append(" AND #cl.").append(d).append(" < :now");
        }
        return UpdateItemRequest.builder().key(Items.key(pk)).updateExpression(update.toString())
                .conditionExpression(condition.toString()).expressionAttributeNames(names)
                .expressionAttributeValues(values);
    }

    void release(String name, String pk, String token, long deadline) {
        if (!TOKEN.matcher(token).matches()) {
            return; // not a token this store ever issued: nothing to release
        }
        requests.update("releaseTrial", name, UpdateItemRequest.builder().key(Items.key(pk))
                .updateExpression("REMOVE #cl.#t")
                .conditionExpression("attribute_exists(#cl.#t)")
                .expressionAttributeNames(Feed.names("#cl", Items.CLAIMS, "#t", token)), deadline);
    }

    static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
