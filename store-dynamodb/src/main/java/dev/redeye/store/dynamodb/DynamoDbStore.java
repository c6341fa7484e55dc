package dev.redeye.store.dynamodb;

import dev.redeye.api.BreakerState;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.Transitions;
import dev.redeye.spi.TrialClaims;
import dev.redeye.spi.support.Arguments;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * A {@link Store} on Amazon DynamoDB with every capability: {@link AtomicUpdates}, {@link TrialClaims},
 * {@link TransitionFeed} and {@link QuorumState} (a state's contributions are stored in its item, field
 * {@code st.contributors}, layout 3). It needs nothing beyond single-item reads and
 * conditional writes: no Streams, no transactions, no TTL (all three are missing on dynalite, the open-source
 * server its tests run on).
 *
 * <h2>How it works</h2>
 * One item per operation name (layout in the {@linkplain dev.redeye.store.dynamodb package description}).
 * <ul>
 * <li><b>Atomic operations</b> are a compare-and-set loop: a consistent {@code GetItem}, the shared
 * {@link Transitions} rule in Java, and an {@code UpdateItem} conditioned on the item's write counter
 * {@code wc} (or {@code attribute_not_exists(pk)} to create the item). The write counter, not the version,
 * is the compare-and-set token, because the version moves only on transitions and a sub-threshold increment
 * (or an outcome recorded in a sliding window) must still conflict with a concurrent one. A lost condition is
 * retried after a random pause (full jitter, doubling up to 32 ms) up to {@link Builder#maxAttempts maxAttempts}
 * times; a conflict that persists beyond that is a {@link StoreException}, never a lost update. A call that changes nothing writes nothing.</li>
 * <li><b>Ambiguous writes</b>: a write whose answer was lost may have landed, and the SDK's retry of it then
 * fails its condition. Each state write records the call's id in its store instance's entry of the item's
 * {@code lw} map, which only that instance prunes (of calls that have returned), so the call's next read
 * recognizes its own write however many writers wrote since, instead of applying the rule twice.</li>
 * <li><b>One deadline per call</b> ({@link Builder#callDeadline callDeadline}, 2 s by default) bounds every
 * call, all its requests, SDK retries, conditional attempts and feed-head writes included.</li>
 * <li><b>Global Tables</b> with eventually consistent replicas are refused at {@link Builder#build()} unless
 * {@link Builder#allowGlobalTable allowGlobalTable}: conditional writes are atomic only within a region there.</li>
 * <li><b>Versions never go backwards</b>: {@link #delete} keeps the item as a tombstone that
 * keeps the last version, and an expired state stays in its item until garbage collection. An atomic
 * operation that finds no live state starts the key's new life from
 * {@link BreakerState#initial(long)} with base {@code max(last version + 1, clock in microseconds)}: the
 * tombstone covers clock skew between writers, the clock covers the time after DynamoDB TTL removed the item
 * (at least {@link Builder#retention retention}, 7 days by default, after the state expired).</li>
 * <li><b>State expiry</b> is the attribute {@code exp} (the store's clock + {@link Policy#stateTtl()},
 * refreshed by every atomic write; + the ttl given to {@link #put}) compared on every read; a
 * {@linkplain BreakerState#pinned() pinned} state (forced, or holding an operator's mode) has none and never
 * expires (TCK R1.9 and R5.7). DynamoDB TTL on the attribute {@code gc} only collects
 * garbage, days later.</li>
 * <li><b>Trial claims</b> live in the item's {@code cl} map; their expiry is compared in the write's
 * condition, never left to DynamoDB TTL (see {@link #claimTrial}). DynamoDB has no server clock, so
 * <b>claims use the caller's clock</b>: the claim ttl must dwarf the clock skew between your instances
 * (seconds of ttl against milliseconds of NTP skew).</li>
 * <li><b>Feed</b>: {@link Builder#feedShards feedShards} feed items per table (16 by default), each with a
 * sequence number and a ring of the last events of the operations hashed to it, written by a single-item
 * compare-and-set after each transition, read one after the other by one thread per store instance, each once
 * per poll interval (see {@link #subscribe}).</li>
 * </ul>
 *
 * <h2>Use</h2>
 * <pre>{@code
 * DynamoDbClient client = DynamoDbClient.builder()...build();      // your credentials, region, HTTP client
 * Store store = DynamoDbStore.builder(client).table("redeye_breakers").build();
 * }</pre>
 * or {@code Stores.open("dynamodb://redeye_breakers?region=eu-west-1")} through {@link DynamoDbStoreProvider},
 * which builds a client with timeouts sized for a breaker. The store never closes a client it was given.
 * Give your own client short timeouts too: the SDK's defaults retry with backoffs of seconds, which a
 * caller of a breaker waits through (see the module README).
 *
 * <h2>Cost</h2>
 * For items under 1 KB (names under a few hundred characters): {@link #get} is one consistent
 * {@code GetItem} (1 read unit); {@link #put} and {@link #delete} one {@code UpdateItem} (1 write unit); an
 * atomic operation one read and one write (1 RCU + 1 WCU) without contention, and only the read when it
 * changes nothing (a batch of outcomes, {@link OutcomeBatches}, is one such operation, its rule folded over
 * the outcomes in the same conditional-write loop); a claim one write, or 1 RCU + 2 WCU when expired claims must be cleared; a release one
 * write. A transition adds its feed shard's read and write (1 RCU per 4 KB + 1 WCU per KB of ring), and with
 * {@link Builder#legacyFeedHead legacyFeedHead} a 1 WCU notice on the earlier releases' feed head. Each
 * subscribed store instance reads each feed item (eventually consistent: 0.5 RCU per 4 KB) once per poll
 * interval. A page of a listing ({@link #page}) is one consistent {@code Scan} of at most {@code limit} items:
 * 1 RCU per 4 KB of the items it evaluates, feed items and tombstones included. A sliding window's text is part of the
 * item and of each event line (one byte per outcome of a count window, up to a few bytes per bucket of a time
 * window): a count window of several hundred outcomes makes an item of more than 1 KB, billed per started KB.
 * {@link #usage()} counts requests and the capacity units DynamoDB reports.
 *
 * <p>Thread-safe. Every failure (throttling, timeouts, an unreachable endpoint, a missing table, malformed
 * items) is a {@link StoreException}; after {@link #close()} every method throws it at once.
 */
public final class DynamoDbStore implements Store, AtomicUpdates, TrialClaims, TransitionFeed, QuorumState,
        OperationListing, OutcomeBatches {
    private static final Logger LOG = LoggerFactory.getLogger(DynamoDbStore.class);
    /** The table name used when none is given. */
    public static final String DEFAULT_TABLE = "redeye_breakers";
    /** The longest one store call may take when {@link Builder#callDeadline} is not set: 2 seconds. */
    public static final Duration DEFAULT_CALL_DEADLINE = Duration.ofSeconds(2);
    /** The shortest {@link Builder#callDeadline call deadline}. */
    static final Duration MIN_CALL_DEADLINE = Duration.ofMillis(10);
    /** The longest {@link Builder#callDeadline call deadline}. */
    static final Duration MAX_CALL_DEADLINE = Duration.ofMinutes(10);
    /** Durations beyond ~100 years are capped, so that epoch arithmetic never overflows. */
    private static final long MAX_TTL_MILLIS = Duration.ofDays(36_500).toMillis();
    private static final long BACKOFF_CAP_MILLIS = 32;

    private final Requests requests;
    private final String table;
    private final Clock clock;
    private final int maxAttempts;
    private final long retentionSeconds;
    /** This instance's key in the items' {@code lw} maps, and the ids of its atomic calls still running. */
    private final String instanceId = Items.newInstanceId();
    private final AtomicLong callIds = new AtomicLong();
    private final Set<Long> runningCalls = ConcurrentHashMap.newKeySet();
    /** How long this instance's {@code lw} entry must stay after a write: its call deadline plus skew. */
    private final long writerEntryMillis;
    private final Claims claims;
    private final Feed feed;
    private final Listing listing;
    private final AutoCloseable owned;
    private final AtomicBoolean closed = new AtomicBoolean();

    private DynamoDbStore(Builder b) {
        this.table = b.table;
        this.clock = b.clock;
        this.maxAttempts = b.maxAttempts;
        this.retentionSeconds = b.retention.getSeconds();
        this.owned = b.owned;
        this.requests = new Requests(b.client, b.table, closed, b.callDeadline);
        this.writerEntryMillis = b.callDeadline.toMillis() + Items.WRITER_SKEW_MARGIN_MILLIS;
        this.claims = new Claims(requests, clock, b.maxAttempts, retentionSeconds);
        this.listing = new Listing(requests, clock, b.table);
        this.feed = new Feed(requests, b.feedRingSize, b.feedPollInterval, b.feedShards, b.legacyFeedHead);
    }

    /**
     * A builder over your own client (credentials, region, HTTP client, timeouts are yours). The store never
     * closes it.
     *
     * @param client the DynamoDB client
     * @return a builder with the defaults: table {@value #DEFAULT_TABLE}, no table creation, feed poll 500 ms
     * @throws NullPointerException if {@code client} is null
     */
    public static Builder builder(DynamoDbClient client) {
        return new Builder(Objects.requireNonNull(client, "client"));
    }

    /**
     * Opens a store from a {@code dynamodb://} URI exactly as {@code Stores.open(uri)} does through
     * {@link DynamoDbStoreProvider} (which documents the URI), with the concrete type. The store owns its client
     * and closes it in {@link #close()}.
     *
     * @throws IllegalArgumentException if the URI is malformed (the message never holds a secret)
     * @throws StoreException           if the table is missing (and not to be created) or DynamoDB fails
     */
    public static DynamoDbStore open(String uri) {
        return new DynamoDbStoreProvider().open(uri);
    }

    /** The table this store keeps its items in. */
    public String table() {
        return table;
    }

    // ---------------------------------------------------------------------------------------------- Store

    /** {@inheritDoc} One consistent {@code GetItem}. An expired state, a tombstone or a claims-only item read as empty. */
    @Override
    public Optional<BreakerState> get(String key) {
        long deadline = requests.deadline();
        String pk = Keys.partitionKey(key);
        Map<String, AttributeValue> item = requests.get("get", key, pk, deadline);
        return Optional.ofNullable(Items.decode(item, key, clock.millis(), table).live());
    }

    /**
     * {@inheritDoc}
     *
     * <p>One unconditional {@code UpdateItem} of the state attributes (claims are kept) that also moves the write
     * counter, so a concurrent atomic operation retries over it. The state reads as absent {@code ttl} after now
     * (store clock); a {@linkplain BreakerState#pinned() pinned} state (forced, or holding an operator's mode) is
     * stored without expiry, whatever {@code ttl} says.
     *
     * @throws IllegalArgumentException if {@code ttl} is not positive or the key cannot be stored
     */
    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        long deadline = requests.deadline();
        String pk = Keys.partitionKey(key);
        Objects.requireNonNull(state, "state");
        long ttlMillis = ttlMillis(ttl);
        requests.ensureOpen();
        StateWrite w = stateWrite(key, state, clock.millis(), ttlMillis);
        w.update.append(", #cl = if_not_exists(#cl, :nocl) ADD #wc :one");
        w.values.put(":one", Items.n(1));
        w.values.put(":nocl", emptyMap());
        w.names.put("#cl", Items.CLAIMS);
        w.names.put("#wc", Items.WRITES);
        requests.update("put", key, w.request(pk), deadline);
    }

    /**
     * {@inheritDoc}
     *
     * <p>One {@code UpdateItem} that removes the state and every claim but keeps the item as a tombstone holding
     * the last version (so the key's next life starts above it), collected by DynamoDB TTL after
     * {@link Builder#retention retention}; the tombstone is layout 1 (it holds no window, mode or contributions). A no-op for an
     * unknown key.
     */
    @Override
    public void delete(String key) {
        long deadline = requests.deadline();
        String pk = Keys.partitionKey(key);
        requests.ensureOpen();
        requests.update("delete", key, UpdateItemRequest.builder().key(Items.key(pk))
                .updateExpression("REMOVE #st, #exp SET #lay = :lay, #cl = :nocl, #gc = :gc ADD #wc :one")
                .conditionExpression("attribute_exists(#pk)")
                .expressionAttributeNames(Feed.names("#st", Items.STATE, "#exp", Items.EXPIRES, "#cl", Items.CLAIMS,
                        "#gc", Items.GC, "#wc", Items.WRITES, "#pk", Items.PK, "#lay", Items.LAYOUT))
                .expressionAttributeValues(Feed.values(":nocl", emptyMap(), ":one", Items.n(1),
                        ":lay", Items.n(Items.LAYOUT_1),
                        ":gc", Items.n(clock.millis() / 1000 + retentionSeconds))), deadline);
    }

    // ------------------------------------------------------------------------ AtomicUpdates

    /**
     * {@inheritDoc} A consistent read, the rule in Java, and one write conditioned on the item's write counter,
     * retried with jitter when another writer won; a forced close or half-open, or a stored mode, clears the claims
     * map in the same write.
     */
    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(policy, "policy");
        return atomic(operation.kind().method(), key, policy, now, operation.removesClaims(),
                st -> operation.apply(st, policy, now));
    }

    // ---------------------------------------------------------------------------------------------- TrialClaims

    /**
     * {@inheritDoc}
     *
     * <p>Claims live in the operation's item as a map of token (a random UUID) to expiry. One
     * {@code UpdateItem} adds the token when the map holds fewer than {@code permits} entries; otherwise a
     * consistent read counts the live claims and one {@code UpdateItem} adds the token while removing expired
     * entries, under a condition that re-checks each removed entry's expiry ({@code cl.#token < :now}) and the
     * count. Expiry is judged by <b>the caller's clock</b> (DynamoDB has none): keep the ttl far above the
     * clock skew between your instances. DynamoDB TTL never decides a claim.
     *
     * @throws StoreException if DynamoDB fails, or the claim's condition was lost {@code maxAttempts} times
     */
    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        long deadline = requests.deadline();
        String pk = Keys.partitionKey(key);
        Arguments.atLeast("permits", permits, 1);
        long ttlMillis = ttlMillis(ttl);
        requests.ensureOpen();
        return claims.claim(key, pk, permits, ttlMillis, deadline);
    }

    /** {@inheritDoc} One {@code UpdateItem}: {@code REMOVE cl.#token} under {@code attribute_exists(cl.#token)}. */
    @Override
    public void releaseTrial(String key, String token) {
        long deadline = requests.deadline();
        String pk = Keys.partitionKey(key);
        Objects.requireNonNull(token, "token");
        requests.ensureOpen();
        claims.release(key, pk, token, deadline);
    }

    // ---------------------------------------------------------------------------------------------- TransitionFeed

    /**
     * {@inheritDoc} One strongly consistent {@code Scan} of the table per page, with {@code Limit} {@code limit}
     * and the cursor its {@code LastEvaluatedKey}, filtered to the operations' items that hold a state; an expired
     * state is left out as {@link #get} leaves it out (the store's clock). A page may hold fewer entries than
     * {@code limit}, none included, before the end: {@code Limit} bounds the items it evaluates, feed items,
     * tombstones and claims-only items among them. Costs 1 read unit per 4 KB of those items (see {@code Listing}).
     */
    @Override
    public Page page(String cursor, int limit) {
        return listing.page(cursor, limit);
    }

    /**
     * {@inheritDoc}
     *
     * <p>The first subscription reads every feed item strongly consistent (so every transition written after
     * this call returns is delivered) and starts this store's one poller thread, which reads the feed items one
     * after the other, each once per {@link Builder#feedPollInterval poll interval}, while anyone subscribes.
     * {@code onGap} runs when a subscriber may have missed events: a shard's ring no longer holds them, a writer
     * could not append its event, a shard was written with another {@link Builder#feedShards feedShards}, or a
     * poll failed (polls then back off up to 5 s).
     *
     * @throws StoreException if the store is closed or the feed head cannot be read
     */
    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        long deadline = requests.deadline();
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(onGap, "onGap");
        requests.ensureOpen();
        return feed.subscribe(listener, onGap, deadline);
    }

    /** Makes the feed poller's next read fail, as a dropped connection would (tests: the TCK's R6.8 hook). */
    void interruptFeed() {
        feed.injectFault();
    }

    boolean feedPollerAlive() {
        return feed.pollerAlive();
    }

    // ---------------------------------------------------------------------------------------------- usage, lifecycle

    /**
     * What this store instance has asked of DynamoDB so far: requests sent (attempts the SDK retried count
     * once), conditions lost, and the capacity units DynamoDB reported consumed (0 where the endpoint does not
     * report them, or for a lost condition, which DynamoDB bills as the write it would have been).
     *
     * @return a snapshot; cheap
     */
    public Usage usage() {
        return requests.usage();
    }

    /**
     * Requests and capacity of one store instance ({@link DynamoDbStore#usage()}).
     *
     * @param requests          GetItem and UpdateItem requests sent (DescribeTable/CreateTable not counted)
     * @param readUnits         read capacity units DynamoDB reported
     * @param writeUnits        write capacity units DynamoDB reported (lost conditions not included)
     * @param conditionFailures conditional writes whose condition failed (retried or refused)
     * @param mostAttempts      the most conditional writes one atomic call needed so far (1 without contention;
     *                          compare with {@link Builder#maxAttempts})
     */
    public record Usage(long requests, double readUnits, double writeUnits, long conditionFailures,
                        int mostAttempts) {
    }

    /**
     * Stops the feed poller (waiting for it, a few seconds at most), closes the client if the store owns it
     * (opened from a URI) and makes every later call throw {@link StoreException}. Idempotent.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            feed.close();
            if (owned != null) {
                try {
                    owned.close();
                } catch (Exception e) {
                    LOG.warn("closing the DynamoDB client of table {} failed", table, e);
                }
            }
            LOG.debug("closed DynamoDB store on {}", table);
        }
    }

    @Override
    public String toString() {
        return "DynamoDbStore[" + table + (closed.get() ? ", closed]" : "]");
    }

    // ---------------------------------------------------------------------------------------------- internals

    /**
     * One atomic read-modify-write (see the class Javadoc): read, rule, conditional write, retried on a lost
     * condition. A transition is then appended to the feed head.
     */
    private StateChange atomic(String call, String key, Policy policy, long now, boolean dropClaims,
                               Function<BreakerState, StateChange> rule) {
        long deadline = requests.deadline();
        String pk = Keys.partitionKey(key);
        requests.ensureOpen();
        long callId = callIds.incrementAndGet();
        runningCalls.add(callId);
        try {
            return atomic(call, key, pk, policy, now, dropClaims, rule, callId, deadline);
        } finally {
            runningCalls.remove(callId);
        }
    }

    private StateChange atomic(String call, String key, String pk, Policy policy, long now, boolean dropClaims,
                               Function<BreakerState, StateChange> rule, long callId, long deadline) {
        StateChange written = null;
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            Map<String, AttributeValue> item = requests.get(call, key, pk, deadline);
            if (written != null && Items.writtenBy(item, instanceId, callId)) {
                // An earlier attempt's write landed although its answer said otherwise (the SDK retried an attempt
                // whose answer was lost, and the retry failed its condition): applying the rule again would count
                // twice. Only this instance removes this call's id from 'lw', after this call has returned.
                return published(written, key, policy, now, deadline);
            }
            long nowMs = clock.millis();
            Items.Stored stored = Items.decode(item, key, nowMs, table);
            BreakerState prev = stored.live() != null ? stored.live() : BreakerState.initial(newLifeBase(stored));
            StateChange change = rule.apply(prev);
            boolean hasClaims = item != null && item.containsKey(Items.CLAIMS) && item.get(Items.CLAIMS).hasM()
                    && !item.get(Items.CLAIMS).m().isEmpty();
            if (!change.changed() && !(dropClaims && hasClaims)) {
                // Nothing to write. On a key without live state, report the never-written state (version 0),
                // not the base of a life that was never stored.
                return stored.live() != null ? change : StateChange.unchanged(BreakerState.INITIAL);
            }
            StateWrite w = stateWrite(key, change.state(), nowMs, cappedMillis(policy.stateTtlMillis()));
            w.update.append(", #wc = :wc, #lw = :lw");
            w.names.put("#wc", Items.WRITES);
            w.names.put("#lw", Items.LAST_WRITERS);
            w.values.put(":wc", Items.n(Math.max(stored.writes(), 0) + 1));
            w.values.put(":lw", Items.writersAfter(item, instanceId, callId, runningCalls::contains, nowMs,
                    Claims.saturatedAdd(nowMs, writerEntryMillis)));
            if (dropClaims || !stored.exists()) {
                w.update.append(", #cl = :nocl");
                w.names.put("#cl", Items.CLAIMS);
                w.values.put(":nocl", emptyMap());
            }
            if (!stored.exists()) {
                w.names.put("#pk", Items.PK);
                w.condition = "attribute_not_exists(#pk)";
            } else if (stored.writes() < 0) {
                w.condition = "attribute_not_exists(#wc)";
            } else {
                w.condition = "#wc = :seen";
                w.values.put(":seen", Items.n(stored.writes()));
            }
            written = change;
            if (requests.update(call, key, w.request(pk), deadline)) {
                requests.attempts(attempt);
                return published(change, key, policy, now, deadline);
            }
            Requests.backoff(attempt, BACKOFF_CAP_MILLIS, deadline);
        }
        if (written != null && Items.writtenBy(requests.get(call, key, pk, deadline), instanceId, callId)) {
            return published(written, key, policy, now, deadline); // the last attempt's lost answer, as above
        }
        throw new StoreException("DynamoDB " + call + " of '" + OperationNames.abbreviate(key) + "' on table " + table
                + " lost its conditional write " + maxAttempts + " times in a row (extreme contention); nothing was"
                + " written by this call");
    }

    private StateChange published(StateChange change, String key, Policy policy, long now, long deadline) {
        if (change.isTransition()) {
            feed.publish(change.toEvent(key, policy, now), deadline);
        }
        return change;
    }

    /** The starting version of a key's new life: above its last version and at least the clock in microseconds. */
    private long newLifeBase(Items.Stored stored) {
        Instant t = clock.instant();
        long micros = Math.max(0, t.getEpochSecond() * 1_000_000L + t.getNano() / 1_000);
        long afterLast = stored.lastVersion() >= 0 ? stored.lastVersion() + 1 : 0;
        return Math.max(afterLast, micros);
    }

    /** The SET/REMOVE of a state write; the caller adds its write-counter and claim clauses and condition. */
    private StateWrite stateWrite(String key, BreakerState state, long nowMs, long ttlMillis) {
        StateWrite w = new StateWrite();
        w.names.putAll(Feed.names("#op", Items.OP, "#lay", Items.LAYOUT, "#st", Items.STATE, "#v", Items.VERSION,
                "#exp", Items.EXPIRES, "#gc", Items.GC));
        w.values.putAll(Feed.values(":op", Items.s(key), ":lay", Items.n(Items.layoutOf(state)),
                ":st", Items.encodeState(state), ":v", Items.n(state.version())));
        if (state.pinned()) {
            // A pinned state (forced, or an operator's mode) never expires (TCK R1.9/R5.7): no expiry, and no
            // garbage collection either.
            w.update.append("REMOVE #exp, #gc SET #op = :op, #lay = :lay, #st = :st, #v = :v");
        } else {
            long exp = Claims.saturatedAdd(nowMs, ttlMillis);
            w.values.put(":exp", Items.n(exp));
            w.values.put(":gc", Items.n(exp / 1000 + retentionSeconds));
            w.update.append("SET #op = :op, #lay = :lay, #st = :st, #v = :v, #exp = :exp, #gc = :gc");
        }
        return w;
    }

    /** A state write being assembled. */
    private static final class StateWrite {
        final StringBuilder update = new StringBuilder();
        final Map<String, String> names = new java.util.HashMap<>();
        final Map<String, AttributeValue> values = new java.util.HashMap<>();
        String condition;

        UpdateItemRequest.Builder request(String pk) {
            UpdateItemRequest.Builder b = UpdateItemRequest.builder().key(Items.key(pk))
                    .updateExpression(update.toString()).expressionAttributeNames(names)
                    .expressionAttributeValues(values);
            return condition == null ? b : b.conditionExpression(condition);
        }
    }

    private static AttributeValue emptyMap() {
        return AttributeValue.builder().m(Map.of()).build();
    }

    private static long ttlMillis(Duration ttl) {
        Arguments.positive("ttl", ttl);
        return ttl.compareTo(Duration.ofMillis(MAX_TTL_MILLIS)) > 0 ? MAX_TTL_MILLIS : Math.max(1, ttl.toMillis());
    }

    private static long cappedMillis(long ttlMillis) {
        return Math.max(1, Math.min(ttlMillis, MAX_TTL_MILLIS));
    }

    /**
     * Builder for {@link DynamoDbStore}; every setter validates its argument at once. Not thread-safe.
     */
    public static final class Builder {
        private final DynamoDbClient client;
        private String table = DEFAULT_TABLE;
        private boolean createTable;
        private Duration feedPollInterval = Duration.ofMillis(500);
        private int feedRingSize = 32;
        private int feedShards = Feed.DEFAULT_SHARDS;
        private boolean legacyFeedHead = true;
        private int maxAttempts = 100;
        private Duration retention = Duration.ofDays(7);
        private Clock clock = Clock.systemUTC();
        private Duration callDeadline = DEFAULT_CALL_DEADLINE;
        private boolean allowGlobalTable;
        private AutoCloseable owned;

        private Builder(DynamoDbClient client) {
            this.client = client;
        }

        /**
         * The table (default {@value DynamoDbStore#DEFAULT_TABLE}); its only key must be the partition key
         * {@code pk} of type S.
         *
         * @throws IllegalArgumentException unless 3 to 255 characters of {@code [A-Za-z0-9_.-]}
         */
        public Builder table(String table) {
            this.table = Tables.validate(table);
            return this;
        }

        /**
         * Whether {@link #build()} creates a missing table (on-demand billing, and DynamoDB TTL on {@code gc} where
         * the endpoint supports it). Default off: a missing table is then a {@link StoreException} whose message
         * holds the {@code aws dynamodb create-table} command.
         */
        public Builder createTable(boolean createTable) {
            this.createTable = createTable;
            return this;
        }

        /**
         * How often the feed poller reads each feed item while anyone subscribes (default 500 ms), the bound on
         * a subscriber's delay beyond the request itself. Each subscribed store instance reads one item every
         * {@code interval / items} (items: {@link #feedShards feedShards}, plus one with
         * {@link #legacyFeedHead legacyFeedHead}), each an eventually consistent read (0.5 RCU per 4 KB).
         *
         * @throws IllegalArgumentException unless between 10 ms and 60 s
         */
        public Builder feedPollInterval(Duration interval) {
            Objects.requireNonNull(interval, "feedPollInterval");
            if (interval.toMillis() < 10 || interval.compareTo(Duration.ofSeconds(60)) > 0) {
                throw new IllegalArgumentException("feedPollInterval must be between 10 ms and 60 s, was " + interval);
            }
            this.feedPollInterval = interval;
            return this;
        }

        /**
         * How many feed shards carry the transition feed (default 16): an operation's events go to the shard of
         * its name's hash, and each subscribed store instance reads every shard once per
         * {@link #feedPollInterval poll interval}, one after the other. More shards spread the writes of
         * transitions and the reads of subscribers over more items (each item takes 1/shards of them) at the cost
         * of more, smaller reads per instance. <b>Every instance of a fleet must use the same count</b>: a shard
         * written with another count is a gap for its readers on every poll, and logged as an error.
         *
         * @throws IllegalArgumentException unless between 1 and 256
         */
        public Builder feedShards(int shards) {
            this.feedShards = Feed.checkShards(shards);
            return this;
        }

        /**
         * Whether the feed also keeps the single feed head of releases before the sharded feed (item
         * {@code f#head}) working, for a rolling upgrade (default {@code true}): the poller then reads that head
         * too, delivering what an earlier release's instance wrote there, and each transition adds a notice to it
         * (1 WCU) so that an earlier release's subscribers are told of a gap and re-read. Turn it off once no
         * instance of an earlier release uses the table: the store then never reads or writes {@code f#head}.
         */
        public Builder legacyFeedHead(boolean legacyFeedHead) {
            this.legacyFeedHead = legacyFeedHead;
            return this;
        }

        /**
         * How many recent events each feed shard keeps (default 32); a subscriber more than this many transitions
         * of one shard behind gets {@code onGap}. A ring also stays under 32 KB of events.
         *
         * @throws IllegalArgumentException unless between 1 and 1000
         */
        public Builder feedRingSize(int size) {
            if (size < 1 || size > 1000) {
                throw new IllegalArgumentException("feedRingSize must be between 1 and 1000, was " + size);
            }
            this.feedRingSize = size;
            return this;
        }

        /**
         * How many times an atomic operation or a claim tries its conditional write before giving up with a
         * {@link StoreException} (default 100; pauses between attempts are random, at most 32 ms each).
         *
         * @throws IllegalArgumentException if below 1
         */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = Arguments.atLeast("maxAttempts", maxAttempts, 1);
            return this;
        }

        /**
         * How long after a state expires (or is deleted) its item stays before DynamoDB TTL may collect it
         * (default 7 days); the item keeps the key's last version so that a new life starts above it.
         *
         * @throws IllegalArgumentException if shorter than 1 day
         */
        public Builder retention(Duration retention) {
            Objects.requireNonNull(retention, "retention");
            if (retention.compareTo(Duration.ofDays(1)) < 0) {
                throw new IllegalArgumentException("retention must be at least 1 day, was " + retention);
            }
            this.retention = retention;
            return this;
        }

        /**
         * The clock of state expiry, claim expiry and new-life versions (default the system UTC clock). Breaker
         * rules never read it: they use the {@code now} each call passes.
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The longest one store call may take, every request, retry and pause included (default
         * {@link DynamoDbStore#DEFAULT_CALL_DEADLINE 2 s}); past it the call is a {@link StoreException} naming the
         * deadline. Each request is sent with the SDK's {@code apiCallTimeout} lowered to the time left when that is
         * shorter than the client's own, so a call ends by its deadline whatever the client's timeouts, the number
         * of conditional attempts ({@link #maxAttempts}) or the feed-head writes of a transition. A write cut by
         * the deadline may still have been applied (the call cannot know); the engine's store error policy then
         * decides what the caller sees.
         *
         * @throws IllegalArgumentException unless between 10 ms and 10 minutes
         */
        public Builder callDeadline(Duration deadline) {
            Objects.requireNonNull(deadline, "callDeadline");
            if (deadline.compareTo(MIN_CALL_DEADLINE) < 0 || deadline.compareTo(MAX_CALL_DEADLINE) > 0) {
                throw new IllegalArgumentException("callDeadline must be between 10 ms and 10 minutes, was "
                        + deadline);
            }
            this.callDeadline = deadline;
            return this;
        }

        /**
         * Whether {@link #build()} accepts a Global Table whose replicas are eventually consistent (default
         * {@code false}: such a table is refused). A conditional write is atomic only within its region there:
         * two instances writing the same breaker in two regions both win their condition, and DynamoDB's
         * replication then keeps one of the two writes (last writer wins), losing counted failures, trial
         * claims and forced states. Opt in only if every instance of the fleet writes to one region at a time
         * (other regions standing by for a fail-over); see the module README. Tables with multi-Region strong
         * consistency are accepted without it.
         */
        public Builder allowGlobalTable(boolean allow) {
            this.allowGlobalTable = allow;
            return this;
        }

        /** A resource the store closes in {@link DynamoDbStore#close()} (the provider's own client). */
        Builder closeWithStore(AutoCloseable resource) {
            this.owned = Objects.requireNonNull(resource, "resource");
            return this;
        }

        /**
         * Builds the store after checking the table (one {@code DescribeTable}), creating it if asked to.
         *
         * @return a new store; the caller closes it
         * @throws StoreException if the table is missing and not to be created, has another key, is a Global
         *                        Table with eventually consistent replicas and {@link #allowGlobalTable} is off,
         *                        or DynamoDB fails
         */
        public DynamoDbStore build() {
            Tables.ensure(client, table, createTable, allowGlobalTable);
            return new DynamoDbStore(this);
        }
    }
}
