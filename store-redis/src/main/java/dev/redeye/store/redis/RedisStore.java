package dev.redeye.store.redis;

import dev.redeye.spi.support.Arguments;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Contribution;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.StoreException;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
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
import dev.redeye.spi.support.StateCodec;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisAskDataException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisRedirectionException;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * A redeye {@link Store} on Redis (standalone, replicated or Cluster) through a user-supplied Jedis
 * {@link UnifiedJedis} ({@link JedisPooled}, {@link JedisCluster}, ...), offering every capability natively:
 * {@link AtomicUpdates} (one Lua function call per update), {@link TrialClaims} (SET NX
 * PX for one permit, a sorted set of expiring claims for several), {@link TransitionFeed} (a stream read
 * by one dedicated connection), {@link QuorumState} (a state's quorum contributions are kept in its value, and
 * the Lua rules apply an outcome's instance), {@link OperationListing} ({@code SCAN} over the prefix's state
 * keys, every master of a Cluster in turn) and {@link OutcomeBatches} (a batch of outcomes is one call of the
 * library's outcomes function, which folds the rule of a recorded outcome over them, each at its own instant).
 * The stored layout is documented in the {@linkplain dev.redeye.store.redis package Javadoc}.
 *
 * <pre>{@code
 * JedisPooled jedis = new JedisPooled(new HostAndPort("redis.internal", 6379), clientConfig);
 * RedisStore store = RedisStore.builder(jedis)
 *         .prefix("myapp:")
 *         .feedConnection(new HostAndPort("redis.internal", 6379), clientConfig) // optional, see below
 *         .build();
 * }</pre>
 *
 * <p><b>Cost.</b> {@link #get} is one GET; every atomic operation is one call of the store's Lua library
 * (FCALL where the server offers Redis Functions, else EVALSHA: see {@code redeye.lua} and the package
 * Javadoc), plus one more (a small call that XADDs to the feed stream) when it was a transition, except for an
 * automatic transition (opened, reopened, closed, would_open) with {@link Builder#publishInScript} on (a
 * standalone server opened from a URI), which the state function appends itself; {@link #claimTrial} is one call and
 * {@link #releaseTrial} one call. The feed costs one thread and one connection per store
 * instance, started by the first {@link #subscribe}.
 *
 * <p><b>The feed connection.</b> The reader blocks in XREAD, so it needs a connection of its own. It uses,
 * in order: the details given to {@link Builder#feedConnection}; else a connection borrowed for the
 * store's lifetime from a {@link JedisPooled}'s pool (it counts against the pool's {@code maxTotal}, and the
 * store waits at most the feed's read timeout for it, whatever the pool's own {@code maxWait}); else,
 * for a {@link JedisCluster}, a connection to the node owning the feed stream's slot. With any other
 * {@link UnifiedJedis} and no details, {@link #capability(Class)} reports no {@link TransitionFeed} and
 * the engine falls back to polling. The connection is named {@link #feedClientName()} (CLIENT SETNAME).
 *
 * <p><b>Errors.</b> Every Redis failure, malformed data under a key (another type, missing or garbage
 * fields) and any use after {@link #close()} is a {@link StoreException}. Bad arguments are
 * {@link NullPointerException} / {@link IllegalArgumentException}.
 *
 * <p><b>Retries: writes are at most once.</b> A command is sent a second time only when that cannot count
 * twice: when the server proved it did not run it (Cluster MOVED / ASK, a refused connection), or after a
 * broken connection (end of stream, reset: a pooled connection left stale by a restart) for the commands
 * that are harmless twice ({@link #get}, {@link #releaseTrial} (compare-and-delete by token),
 * {@link #claimTrial} with the same token, and the feed XADD). The state script behind every counting and
 * transition method, {@link #put} and {@link #delete} are never re-sent after their reply was lost: the first
 * attempt may have run, and a second one would undo what another instance wrote in between (a re-sent delete
 * erases the life another instance began, a re-sent put the failure it counted). Nothing is re-sent after a
 * timeout (the command may still run; a retry would also double the wait). A broken connection of a {@link JedisPooled}
 * also drops the pool's idle connections, which are as old and most likely as dead. A {@link JedisCluster}
 * re-sends on its own ({@code maxAttempts}, 5 by default, timeouts included): build yours with
 * {@code maxAttempts} 1 for at-most-once writes, as {@link #open(String)} does.
 *
 * <p><b>TTLs</b> above {@link #MAX_TTL_MILLIS} (100 years) are stored as 100 years: Redis rejects an expiry
 * that overflows its clock, and a script must not fail after its first write (every script also checks its
 * arguments before writing).
 *
 * <p><b>An event that could not be published</b> (the XADD after a transition failed) is not thrown: the
 * state change is committed and returned. Every subscriber of this instance gets {@code onGap} at once, on
 * the calling thread, and a gap marker is appended to the stream at this instance's next successful command,
 * on which every reader in every process signals {@code onGap}.
 *
 * <p><b>Threads.</b> Thread-safe as far as the supplied client is ({@link JedisPooled} and
 * {@link JedisCluster} are). Feed callbacks run on the store's reader thread, except the {@code onGap} of an
 * event this instance failed to publish (on the publishing thread).
 *
 * <p><b>Versions</b> never go backwards for a key, also after {@link #delete} or expiry: a key
 * that does not exist starts its new life at the server clock in microseconds ({@code TIME}); see the
 * {@linkplain dev.redeye.store.redis package Javadoc}. Trial outcomes are fenced by the version they were
 * admitted under; clearing sub-threshold failures is a write, not a transition. Feed subscribers get each
 * operation's events in increasing version order.
 *
 * <p><b>Limits.</b> Lua numbers are doubles: times, versions and counters are exact up to 2^53, far above
 * any epoch-millisecond time and any microsecond version base. Operation names must be well-formed UTF-16: a name with an unpaired
 * surrogate (which UTF-8 cannot encode; Jedis would turn it into {@code ?} and merge it with another name)
 * is refused with {@link IllegalArgumentException} by every method. U+0000 is accepted and round-trips.
 */
public final class RedisStore implements Store, AtomicUpdates, TrialClaims, TransitionFeed, QuorumState,
        OperationListing, OutcomeBatches {
    private static final Logger LOG = LoggerFactory.getLogger(RedisStore.class);
    private static final AtomicLong INSTANCES = new AtomicLong();

    private static final String[] FIELDS = {
        StateCodec.FAILURES, StateCodec.LAST_FAILURE_AT, StateCodec.OPEN, StateCodec.OPENED_AT,
        StateCodec.OPEN_COUNT, StateCodec.ERROR_RATE, StateCodec.SAMPLES, StateCodec.TRIAL_SUCCESSES,
        StateCodec.FORCED, StateCodec.VERSION,
    };
    /** The fields of a value with a window or a stored mode: {@link #FIELDS}, then these two. */
    private static final int WINDOW_AND_MODE_FIELDS = FIELDS.length + 2;
    /**
     * The components of a value with contributions: the {@link #WINDOW_AND_MODE_FIELDS}, then the contributions'
     * text ({@link Contribution#encodeAll}, whose commas do not split it).
     */
    private static final int CONTRIBUTORS_COMPONENTS = WINDOW_AND_MODE_FIELDS + 1;
    private static final String MALFORMED = "REDEYE_MALFORMED";
    /**
     * The longest TTL the store writes, 100 years in ms: a longer one ("forever") is stored as this. Redis
     * rejects an expiry whose absolute time overflows its clock, and a script must never fail after its first
     * write.
     */
    public static final long MAX_TTL_MILLIS = 100L * 365 * 24 * 60 * 60 * 1000;
    private static final Duration MAX_TTL = Duration.ofMillis(MAX_TTL_MILLIS);

    /** Whether a command may be sent again after a broken connection (see {@link RedisFailures}). */
    private enum Repeat {
        /** Harmless to run twice: reads, compare-and-delete by token, a claim with the same token, an event. */
        IDEMPOTENT,
        /**
         * Sent again only when the server proved it did not run: writes that count or move state
         * (the state function), and {@code put} and {@code delete}, whose second run would replace or erase what
         * another instance wrote after the first one (a new life of the key, a failure counted on the put state).
         */
        AT_MOST_ONCE
    }

    private final UnifiedJedis client;
    private final boolean closeClient;
    private final LuaRunner lua;
    /** WAIT after a transition for this many replicas (0: no WAIT), at most waitTimeoutMillis. */
    private final int waitReplicas;
    private final long waitTimeoutMillis;
    /** The last policy this store sent, and its text (the state function's args[3]): most calls repeat it. */
    private volatile PolicyText lastPolicy;
    /** Automatic transitions are appended to the feed by the state script itself (standalone servers). */
    private final boolean publishInScript;
    private final RedisKeys keys;
    private final RedisListing listing;
    private final FeedConnector feedConnector;
    private final long feedMaxLength;
    private final long feedTtlMillis;
    private final int feedBlockMillis;
    private final long backoffMinMillis;
    private final long backoffMaxMillis;
    private final String feedClientName;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Object feedLock = new Object();
    private volatile FeedReader reader; // written under feedLock
    /** An event could not be published: append a gap marker to the stream at the next chance. */
    private final AtomicBoolean gapMarkerPending = new AtomicBoolean();

    private RedisStore(Builder b) {
        this.client = b.client;
        this.closeClient = b.closeClient;
        this.lua = new LuaRunner(b.client, b.library != null ? b.library : LuaLibrary.standard(), b.scripting);
        this.waitReplicas = b.waitReplicas;
        this.waitTimeoutMillis = b.waitTimeout.toMillis();
        if (waitReplicas > 0 && !(b.client instanceof JedisPooled) && !(b.client instanceof JedisCluster)) {
            throw new IllegalArgumentException("waitReplicas needs a JedisPooled or a JedisCluster client: WAIT must"
                    + " run on the connection that made the write, which only those let the store choose; was "
                    + b.client.getClass().getName());
        }
        this.publishInScript = b.publishInScript && !(b.client instanceof JedisCluster);
        this.keys = new RedisKeys(b.prefix);
        this.listing = new RedisListing(client, keys, (name, value) -> StateCodec.fromFields(
                fields(value, name, "malformed breaker state at "), where(name)));
        this.feedMaxLength = b.feedMaxLength;
        this.feedTtlMillis = ttlMillis(b.feedTtl);
        this.feedBlockMillis = (int) b.feedBlock.toMillis();
        this.backoffMinMillis = b.backoffMin.toMillis();
        this.backoffMaxMillis = b.backoffMax.toMillis();
        this.feedClientName = "redeye-feed-" + ProcessHandle.current().pid() + "-" + INSTANCES.incrementAndGet()
                + "-" + UUID.randomUUID().toString().substring(0, 8);
        if (b.feedAddress != null) {
            this.feedConnector = FeedConnector.direct(b.feedAddress, b.feedConfig, feedBlockMillis);
        } else if (client instanceof JedisPooled) {
            this.feedConnector = FeedConnector.pooled((JedisPooled) client,
                    FeedReader.readTimeoutMillis(feedBlockMillis));
        } else if (client instanceof JedisCluster) {
            this.feedConnector = FeedConnector.cluster((JedisCluster) client, keys.feed());
        } else {
            this.feedConnector = null;
        }
    }

    /**
     * A builder over {@code client}. The store does not close a client it was given unless
     * {@link Builder#closeClient(boolean)} says so.
     *
     * @throws NullPointerException if {@code client} is null
     */
    public static Builder builder(UnifiedJedis client) {
        return new Builder(client);
    }

    /**
     * Opens a store for a {@code redis://} or {@code rediss://} URI with its own connection pool, closed
     * with the store; the same as {@code Stores.open(uri)} with this module on the class path. See
     * {@link RedisStoreProvider} for the URI's form.
     *
     * @throws IllegalArgumentException if the URI is malformed (the message never contains the password)
     * @throws StoreException           if the server cannot be reached
     */
    public static RedisStore open(String uri) {
        return new RedisStoreProvider().open(uri);
    }

    /** The key prefix every key of this store starts with (possibly empty). */
    public String prefix() {
        return keys.prefix();
    }

    /**
     * The Redis key of the string holding an operation's state: {@code <prefix>{<tag>}:state} (its value is the
     * fields of the state joined by ',': ten, twelve, or twelve and the contributions, see the
     * {@linkplain dev.redeye.store.redis package Javadoc}).
     *
     * @throws NullPointerException if {@code operation} is null
     */
    public String stateKey(String operation) {
        return keys.state(operation);
    }

    /**
     * The Redis key of the sorted set holding an operation's trial claims: {@code <prefix>{<tag>}:trial}.
     *
     * @throws NullPointerException if {@code operation} is null
     */
    public String claimsKey(String operation) {
        return keys.claims(operation);
    }

    /**
     * The Redis key of the string holding an operation's one-permit trial claim (SET NX PX):
     * {@code <prefix>{<tag>}:trial1}.
     *
     * @throws NullPointerException if {@code operation} is null
     */
    public String claim1Key(String operation) {
        return keys.claim1(operation);
    }

    /** The Redis key of the transition stream of this prefix: {@code <prefix>redeye:feed}. */
    public String feedKey() {
        return keys.feed();
    }

    /** The Jedis client this store sends its commands through (for this module's tests). */
    UnifiedJedis client() {
        return client;
    }

    /** The CLIENT SETNAME name of this instance's feed connection, unique per instance. */
    public String feedClientName() {
        return feedClientName;
    }

    /** Whether this instance's feed reader thread is running (for this module's tests). */
    boolean isFeedReaderAlive() {
        synchronized (feedLock) {
            return reader != null && reader.thread() != null && reader.thread().isAlive();
        }
    }

    // ---------------------------------------------------------------- Store

    /**
     * {@inheritDoc} One GET of the state value. A key still holding the hash of an earlier release (GET answers
     * WRONGTYPE) is read with one HGETALL more; the next write of its state replaces it with the value.
     */
    @Override
    public Optional<BreakerState> get(String key) {
        String k = keys.state(key);
        checkOpen();
        Object stored = call("get", key, Repeat.IDEMPOTENT, () -> readState(k));
        if (stored == null) {
            return Optional.empty();
        }
        if (stored instanceof String value) {
            return Optional.of(StateCodec.fromFields(fields(value, key, "malformed breaker state at "), where(key)));
        }
        @SuppressWarnings("unchecked")
        Map<String, String> hash = (Map<String, String>) stored;
        return Optional.of(StateCodec.fromFields(hash, where(key)));
    }

    /**
     * The stored state under {@code k}: its value (a String), the fields of the hash an earlier release wrote
     * (a Map), or null when there is none. Data of another type fails with WRONGTYPE (from HGETALL).
     */
    private Object readState(String k) {
        try {
            return client.get(k);
        } catch (JedisDataException e) {
            if (!String.valueOf(e.getMessage()).startsWith("WRONGTYPE")) {
                throw e;
            }
        }
        Map<String, String> hash = client.hgetAll(k);
        return hash == null || hash.isEmpty() ? null : hash;
    }

    /**
     * {@inheritDoc} One call of the library's put function, which replaces whatever was under the state key
     * (the hash of an earlier release included) with the state's value and sets its TTL, in one SET; never re-sent
     * after its reply was lost (see the class Javadoc), so such a failure is a {@link StoreException} whose
     * write may have run. A pinned state ({@link BreakerState#pinned()}: forced, or with a stored mode) is
     * stored without expiry and {@code ttl} is ignored: it holds an operator's decision, which must not lapse
     * back to the configured behaviour (and while forced, every call is rejected at the gate, so nothing would
     * refresh the TTL before it ran out).
     *
     * @throws IllegalArgumentException if {@code ttl} is not positive
     */
    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        String k = keys.state(key);
        Objects.requireNonNull(state, "state");
        long ttlMillis = ttlMillis(ttl);
        checkOpen();
        List<String> args = List.of(state.pinned() ? "0" : Long.toString(ttlMillis), value(state)); // 0: no expiry
        call("put", key, Repeat.AT_MOST_ONCE, () -> lua.run(LuaLibrary.Fn.PUT, List.of(k), args));
    }

    /**
     * {@inheritDoc} One DEL of the state key and both claim keys (same slot); never re-sent after its reply
     * was lost (see the class Javadoc), so such a failure is a {@link StoreException} whose delete may have run.
     */
    @Override
    public void delete(String key) {
        String state = keys.state(key);
        String claims = keys.claims(key);
        String claim1 = keys.claim1(key);
        checkOpen();
        call("delete", key, Repeat.AT_MOST_ONCE, () -> client.del(state, claims, claim1));
    }

    /**
     * {@inheritDoc} Reports no {@link TransitionFeed} when the store has no way to open a dedicated feed
     * connection (see the class Javadoc).
     */
    @Override
    public <C> Optional<C> capability(Class<C> type) {
        if (type == TransitionFeed.class && feedConnector == null) {
            return Optional.empty();
        }
        return Store.super.capability(type);
    }

    /**
     * Stops the feed reader (waiting up to 5 s for its thread), frees its connection, and closes the
     * client if this store owns it. Idempotent; never throws.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        FeedReader r;
        synchronized (feedLock) {
            r = reader;
            reader = null;
        }
        if (r != null) {
            r.close(5_000);
        }
        if (closeClient) {
            try {
                client.close();
            } catch (RuntimeException e) {
                LOG.debug("closing the Redis client failed", e);
            }
        }
    }

    // ---------------------------------------------------------------- AtomicUpdates

    /**
     * {@inheritDoc} One call of the library's state function, which expresses the rule named by
     * {@link AtomicOperation.Kind#wireName()} natively (parity with {@code Transitions} is proven by the TCK's
     * model rules), plus one to publish when it was a transition. Forcing CLOSED deletes both claim keys in the
     * same script, and so does storing a mode. A pinned state (forced OPEN, or a stored mode) is stored without
     * expiry, and so is every later write while it stays pinned; the state's clean-up TTL
     * ({@link Policy#stateTtl()}) applies again from the first write that leaves it unpinned. A batch of outcomes
     * ({@link AtomicOperation#outcomes}) is one call of the outcomes function: one GET, the outcomes folded in
     * order at their own instants, one SET of the state after the last, and the first transition's event.
     */
    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        Objects.requireNonNull(operation, "operation");
        return apply(operation, key, policy, now);
    }

    // ---------------------------------------------------------------- TrialClaims

    /**
     * {@inheritDoc} One call of the library's claim function: {@code SET NX PX} of the one-permit claim key when
     * {@code permits == 1} (refused while the sorted set holds a live claim of a breaker with more permits),
     * else a sorted set whose members expire by score, counting the one-permit claim too. Expiry is judged by
     * the Redis server's clock. The token is a random UUID.
     */
    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        String k = keys.claims(key);
        String k1 = keys.claim1(key);
        Arguments.atLeast("permits", permits, 1);
        long ttlMillis = ttlMillis(ttl);
        checkOpen();
        String token = UUID.randomUUID().toString();
        // the same token on a second attempt: the claim function answers 1 again if the first one did claim
        Object r = call("claimTrial", key, Repeat.IDEMPOTENT,
                () -> lua.run(LuaLibrary.Fn.CLAIM, List.of(k, k1),
                        List.of(Integer.toString(permits), Long.toString(ttlMillis), token)));
        return r instanceof Long && (Long) r == 1L ? Optional.of(token) : Optional.empty();
    }

    /**
     * {@inheritDoc} One call of the library's release function: deletes the one-permit claim if it holds this token
     * (compare-and-delete), else removes the token from the sorted set; a stale or unknown token can never
     * free another caller's claim.
     */
    @Override
    public void releaseTrial(String key, String token) {
        String k = keys.claims(key);
        String k1 = keys.claim1(key);
        Objects.requireNonNull(token, "token");
        checkOpen();
        call("releaseTrial", key, Repeat.IDEMPOTENT, () -> lua.run(LuaLibrary.Fn.RELEASE, List.of(k, k1), List.of(token)));
    }

    // ---------------------------------------------------------------- OperationListing

    /**
     * {@inheritDoc} {@code SCAN} over this prefix's state keys, each decoded back to its operation, then the states
     * of the page in one more round trip ({@code MGET}; on a Cluster, a pipeline of {@code GET}s to the nodes owning
     * them), every master of a Cluster scanned in turn. A page may hold fewer entries than {@code limit}, none
     * included, before the end, and an operation may be listed twice while keys are added ({@code SCAN}'s
     * guarantees); an entry holds no state when its key went between the two reads, holds an earlier release's
     * hash or malformed data. See {@link RedisListing} for the cursor and the cost.
     */
    @Override
    public Page page(String cursor, int limit) {
        OperationListing.checkLimit(limit);
        checkOpen();
        try {
            return listing.page(cursor, limit);
        } catch (JedisException e) {
            if (closed.get()) {
                throw new StoreException("RedisStore is closed", e);
            }
            throw new StoreException("redis listing of prefix '" + OperationNames.abbreviate(keys.prefix())
                    + "' failed: " + e.getMessage(), e);
        }
    }

    // ---------------------------------------------------------------- TransitionFeed

    /**
     * {@inheritDoc} The first call opens the dedicated feed connection, records the stream's current end
     * (every transition published after this method returns is delivered) and starts the reader thread.
     *
     * @throws StoreException       if the store is closed, has no feed connection, or cannot connect
     * @throws NullPointerException if an argument is null
     */
    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(onGap, "onGap");
        synchronized (feedLock) {
            checkOpen();
            if (feedConnector == null) {
                throw new StoreException("this RedisStore has no feed connection: build it over a JedisPooled or"
                        + " JedisCluster, or give Builder.feedConnection(...)");
            }
            if (reader == null) {
                FeedReader r = new FeedReader(feedConnector, keys.feed(), feedClientName, feedBlockMillis,
                        feedMaxLength, backoffMinMillis, backoffMaxMillis);
                try {
                    r.start();
                } catch (JedisException e) {
                    throw new StoreException("cannot start the redeye feed reader on " + feedConnector.describe()
                            + ": " + e.getMessage(), e);
                }
                reader = r;
            }
            return reader.add(listener, onGap);
        }
    }

    /** Names the prefix and the feed connection; never credentials. */
    @Override
    public String toString() {
        return "RedisStore[prefix=" + OperationNames.abbreviate(keys.prefix()) + ", feed="
                + (feedConnector == null ? "none" : feedConnector.describe()) + (closed.get() ? ", closed" : "") + "]";
    }

    // ---------------------------------------------------------------- internals

    private StateChange apply(AtomicOperation operation, String key, Policy policy, long now) {
        String state = keys.state(key);
        String claims = keys.claims(key);
        String claim1 = keys.claim1(key);
        Objects.requireNonNull(policy, "policy");
        checkOpen();
        AtomicOperation.Kind kind = operation.kind();
        String op = kind.wireName();
        if (kind == AtomicOperation.Kind.OUTCOMES) {
            return run(LuaLibrary.Fn.OUTCOMES, op, key, publishInScript ? List.of(state, keys.feed()) : List.of(state),
                    batchArguments(operation, key, policy), policy, now);
        }
        String own;
        switch (kind) {
            case TRIAL_SUCCESS, TRIAL_FAILURE, FORCE_MODE -> own = Long.toString(operation.trialVersion());
            case SLOW_CALL_FAILED -> own = operation.slot() + ":" + operation.trialVersion();
            case FORCE_HALF_OPEN -> own = Long.toString(Transitions.halfOpenOpenedAt(policy, now));
            default -> own = "";
        }
        // Every key and argument costs the server time per call: a recorded outcome or slow call (what every
        // guarded call sends) goes to the record function, which takes no own argument and no claim keys; the
        // claim keys go only with an operation that removes them.
        boolean recorded = switch (kind) {
            case FAILURE, SUCCESS, SLOW_SUCCESS, SLOW_FAILURE, SLOW_CALL -> true;
            default -> false;
        };
        boolean removes = operation.removesClaims();
        LuaLibrary.Fn fn = recorded ? LuaLibrary.Fn.RECORD : LuaLibrary.Fn.STATE;
        List<String> scriptKeys;
        List<String> scriptArgs;
        if (recorded) {
            scriptKeys = publishInScript ? List.of(state, keys.feed()) : List.of(state);
            // the instance goes last, only under a quorum: the rules read it nowhere else
            String instance = policy.quorumOn() ? operation.instance() : null;
            if (instance == null) {
                scriptArgs = publishInScript
                        ? List.of(op, Long.toString(now), policyText(policy), key, Long.toString(feedMaxLength),
                                Long.toString(feedTtlMillis))
                        : List.of(op, Long.toString(now), policyText(policy));
            } else {
                scriptArgs = publishInScript
                        ? List.of(op, Long.toString(now), policyText(policy), key, Long.toString(feedMaxLength),
                                Long.toString(feedTtlMillis), instance)
                        : List.of(op, Long.toString(now), policyText(policy), instance);
            }
        } else if (publishInScript) {
            scriptKeys = removes ? List.of(state, claims, claim1, keys.feed()) : List.of(state, keys.feed());
            scriptArgs = List.of(op, Long.toString(now), policyText(policy), own, removes ? "1" : "0",
                    key, Long.toString(feedMaxLength), Long.toString(feedTtlMillis));
        } else {
            scriptKeys = removes ? List.of(state, claims, claim1) : List.of(state);
            scriptArgs = List.of(op, Long.toString(now), policyText(policy), own, removes ? "1" : "0");
        }
        return run(fn, op, key, scriptKeys, scriptArgs, policy, now);
    }

    /**
     * Runs the state, record or outcomes function with its keys (the state key first) and arguments, publishes
     * the transition it made when it did not append the event itself, and waits for the replicas when asked.
     */
    private StateChange run(LuaLibrary.Fn fn, String op, String key, List<String> scriptKeys,
            List<String> scriptArgs, Policy policy, long now) {
        String state = scriptKeys.get(0);
        long[] acked = {-1};
        Object raw = call(op, key, Repeat.AT_MOST_ONCE, () -> waitReplicas == 0
                ? lua.run(fn, scriptKeys, scriptArgs)
                : runAndWait(fn, state, scriptKeys, scriptArgs, acked));
        Reply reply = Reply.parse(raw);
        if (reply == null) {
            throw new StoreException("unexpected reply from the " + fn.exported + " function at " + where(key) + ": "
                    + raw);
        }
        StateChange change = decode(reply, key);
        // "1": the function appended the event; "0": its append failed; "-": it appends none (a forced change, or
        // publishing in the function is off). Publishing here also signals a gap if the stream still refuses.
        if (change.isTransition() && !"1".equals(reply.published)) {
            publish(change.toEvent(key, policy, now));
        }
        if (acked[0] >= 0 && acked[0] < waitReplicas) {
            throw new StoreException("the " + change.transition().wireName() + " transition of " + where(key)
                    + " is applied on the primary, but only " + acked[0] + " of " + waitReplicas + " replicas"
                    + " acknowledged it within " + waitTimeoutMillis + " ms (waitReplicas): a fail-over now"
                    + " could lose it");
        }
        return change;
    }

    /**
     * The outcomes function's arguments for a batch ({@link AtomicOperation.Kind#OUTCOMES}): its outcomes
     * ({@link #batchText}), the policy, the stream's three where the function appends the event, and last, only
     * under a quorum, the instance they are attributed to (the record function's order).
     */
    private List<String> batchArguments(AtomicOperation batch, String key, Policy policy) {
        List<String> args = new ArrayList<>(6);
        args.add(batchText(batch));
        args.add(policyText(policy));
        if (publishInScript) {
            args.add(key);
            args.add(Long.toString(feedMaxLength));
            args.add(Long.toString(feedTtlMillis));
        }
        String instance = policy.quorumOn() ? batch.instance() : null;
        if (instance != null) {
            args.add(instance);
        }
        return args;
    }

    /**
     * A batch's outcomes as the outcomes function reads them (its BATCH text): per outcome, joined by ',', its
     * instant minus the previous outcome's (the first one's minus 0), left out when 0, then one digit, 0 success,
     * 1 failure, 2 slow success, 3 slow failure. Consecutive outcomes are a few ms apart, so most take one to
     * three characters (a full batch of {@value AtomicOperation#MAX_BATCH} a few KB), where the packed longs in
     * decimal would take fourteen each. No overflow: instants are within 2^61 of the epoch
     * ({@link AtomicOperation#packOutcome}), so their differences are longs.
     */
    static String batchText(AtomicOperation batch) {
        int n = batch.outcomeCount();
        StringBuilder sb = new StringBuilder(n * 4 + 16);
        long previous = 0;
        for (int i = 0; i < n; i++) {
            long at = batch.outcomeAt(i);
            if (i > 0) {
                sb.append(',');
            }
            if (at != previous) {
                sb.append(at - previous);
            }
            sb.append((batch.outcomeSucceeded(i) ? 0 : 1) + (batch.outcomeSlow(i) ? 2 : 0));
            previous = at;
        }
        return sb.toString();
    }

    /**
     * The state function and, when it made a transition, {@code WAIT waitReplicas waitTimeout} on the same
     * connection (WAIT counts the replicas that acknowledged this connection's writes): the pool's connection
     * of a {@link JedisPooled}, the connection to the node owning the key's slot of a {@link JedisCluster}
     * (following one MOVED / ASK redirection to the node it names). Sets {@code acked[0]} to WAIT's answer.
     */
    private Object runAndWait(LuaLibrary.Fn fn, String stateKey, List<String> scriptKeys, List<String> scriptArgs,
            long[] acked) {
        Connection c = client instanceof JedisPooled ? ((JedisPooled) client).getPool().getResource()
                : ((JedisCluster) client).getConnectionFromSlot(JedisClusterCRC16.getSlot(stateKey));
        try (UnifiedJedis one = new UnifiedJedis(c)) {
            Object raw;
            try {
                raw = lua.run(one, fn, scriptKeys, scriptArgs);
            } catch (JedisRedirectionException moved) {
                if (!(client instanceof JedisCluster)) {
                    throw moved;
                }
                ConnectionPool target = ((JedisCluster) client).getClusterNodes().get(moved.getTargetNode().toString());
                if (target == null) {
                    throw moved;
                }
                try (UnifiedJedis there = new UnifiedJedis(target.getResource())) {
                    if (moved instanceof JedisAskDataException) {
                        there.sendCommand(Protocol.Command.ASKING);
                    }
                    raw = lua.run(there, fn, scriptKeys, scriptArgs);
                    if (isTransition(raw)) {
                        acked[0] = there.waitReplicas(stateKey, waitReplicas, waitTimeoutMillis);
                    }
                    return raw;
                }
            }
            if (isTransition(raw)) {
                acked[0] = one.waitReplicas(stateKey, waitReplicas, waitTimeoutMillis);
            }
            return raw;
        }
    }

    private static boolean isTransition(Object raw) {
        Reply r = Reply.parse(raw);
        return r != null && r.kind != null;
    }

    /**
     * The reply of the state and record functions, one string whose parts ' ' separates (a state's fields are
     * numbers joined by ','): {@code previous}, {@code previous next}, or {@code previous next kind published}.
     */
    static final class Reply {
        final String previous;
        final String next;
        /** The transition's wire name, or null for none. */
        final String kind;
        /** "1" appended by the function, "0" its append failed, "-" none to append there; null without a kind. */
        final String published;

        private Reply(String previous, String next, String kind, String published) {
            this.previous = previous;
            this.next = next;
            this.kind = kind;
            this.published = published;
        }

        /** The reply in {@code raw}, or null when it is not of that form. */
        static Reply parse(Object raw) {
            if (!(raw instanceof byte[]) && !(raw instanceof String)) {
                return null;
            }
            String r = text(raw);
            int a = r.indexOf(' ');
            if (a < 0) {
                return r.isEmpty() ? null : new Reply(r, r, null, null);
            }
            int b = r.indexOf(' ', a + 1);
            if (b < 0) {
                return new Reply(r.substring(0, a), r.substring(a + 1), null, null);
            }
            int c = r.indexOf(' ', b + 1);
            if (c < 0 || r.indexOf(' ', c + 1) >= 0 || c == b + 1 || c == r.length() - 1) {
                return null;
            }
            return new Reply(r.substring(0, a), r.substring(a + 1, b), r.substring(b + 1, c), r.substring(c + 1));
        }
    }

    /** A policy and the text the state function takes for it (args[3]). */
    private static final class PolicyText {
        final Policy policy;
        final String text;

        PolicyText(Policy policy, String text) {
            this.policy = policy;
            this.text = text;
        }
    }

    /** The policy argument of the last policy seen, since a breaker sends its own on every call. */
    private String policyText(Policy policy) {
        PolicyText last = lastPolicy;
        if (last != null && last.policy == policy) {
            return last.text;
        }
        String text = policyArgument(policy);
        lastPolicy = new PolicyText(policy, text);
        return text;
    }

    /**
     * The state and record functions' policy argument, fields joined by ',': strategy code, failureThreshold,
     * maxGapBetweenFailures, errorRateThreshold, minimumCalls, errorRateDecay, successThreshold, stateTtl
     * (capped); then, only for a sliding-window policy, a mode other than {@link BreakerMode#NORMAL} or a quorum
     * (so that most breakers send the short text), failureRateThreshold, minimumNumberOfCalls,
     * slowCallRateThreshold, the window's shape ({@code c<size>} or {@code t<seconds>}) and the mode's code; then,
     * only for a quorum ({@link Policy#quorumOn()}), quorum and quorumFraction (fifteen fields, which the releases
     * before quorums refuse). Doubles in {@link Double#toString(double)}, which the Lua reads back to the same
     * double.
     */
    static String policyArgument(Policy policy) {
        String base = policy.strategy().code() + "," + policy.failureThreshold() + ","
                + policy.maxGapBetweenFailuresMillis() + "," + Double.toString(policy.errorRateThreshold()) + ","
                + policy.minimumCalls() + "," + Double.toString(policy.errorRateDecay()) + ","
                + policy.successThreshold() + "," + Math.min(policy.stateTtlMillis(), MAX_TTL_MILLIS);
        if (policy.strategy() != Strategy.SLIDING_WINDOW && policy.mode() == BreakerMode.NORMAL
                && !policy.quorumOn()) {
            return base;
        }
        String window = base + "," + Double.toString(policy.failureRateThreshold()) + ","
                + policy.minimumNumberOfCalls() + "," + Double.toString(policy.slowCallRateThreshold()) + ","
                + (policy.slidingWindowType() == SlidingWindowType.COUNT_BASED ? "c" : "t")
                + policy.slidingWindowSize() + "," + policy.mode().code();
        if (!policy.quorumOn()) {
            return window;
        }
        return window + "," + policy.quorum() + "," + Double.toString(policy.quorumFraction());
    }

    private StateChange decode(Reply r, String key) {
        String unexpected = "unexpected state from the state function at ";
        BreakerState p = StateCodec.fromFields(fields(r.previous, key, unexpected), where(key));
        BreakerState n = r.next.equals(r.previous) ? p
                : StateCodec.fromFields(fields(r.next, key, unexpected), where(key));
        TransitionKind k = r.kind == null ? null : TransitionKind.fromWireName(r.kind);
        return new StateChange(p, n, k);
    }

    /**
     * The stored value of a state (StateCodec's encodings, joined by ','): its ten fields in FIELDS order for a
     * state without a window, with the {@link BreakerMode#DEFAULT} mode and without contributions; else those
     * ten, the window's text ({@code ""} for none) and the mode's code, twelve fields, which the release before
     * windows refuses as malformed rather than read without them; and for a state with contributions, those
     * twelve and the contributions ({@link Contribution#encodeAll}), which the releases before quorums refuse
     * likewise. The form the library's put takes and writes.
     */
    static String value(BreakerState state) {
        Map<String, String> f = StateCodec.toFields(state);
        StringBuilder sb = new StringBuilder(64);
        for (String name : FIELDS) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(f.get(name));
        }
        boolean contributions = !state.contributors().isEmpty();
        if (state.window() != null || state.mode() != BreakerMode.DEFAULT || contributions) {
            sb.append(',').append(f.getOrDefault(StateCodec.WINDOW, "")).append(',').append(state.mode().code());
        }
        if (contributions) {
            sb.append(',').append(f.get(StateCodec.CONTRIBUTORS));
        }
        return sb.toString();
    }

    /**
     * The fields of a state from its value or the state function's text (see {@link #value}): ten, or twelve
     * with the window (absent when empty) and the mode, or those twelve and the contributions' text (never
     * empty: a state without contributions has ten or twelve fields); anything else is a {@link StoreException}
     * whose message starts with {@code problem}.
     */
    private Map<String, String> fields(String joined, String key, String problem) {
        String[] parts = joined.split(",", CONTRIBUTORS_COMPONENTS);
        if (parts.length != FIELDS.length && parts.length != WINDOW_AND_MODE_FIELDS
                && parts.length != CONTRIBUTORS_COMPONENTS) {
            throw new StoreException(problem + where(key) + ": not " + FIELDS.length + " (or "
                    + WINDOW_AND_MODE_FIELDS + ", or more with contributions) comma-separated fields: "
                    + OperationNames.abbreviate(joined));
        }
        if (parts.length == CONTRIBUTORS_COMPONENTS && parts[WINDOW_AND_MODE_FIELDS].isEmpty()) {
            throw new StoreException(problem + where(key) + ": the contributions are empty (a state without them has "
                    + FIELDS.length + " or " + WINDOW_AND_MODE_FIELDS + " fields): " + OperationNames.abbreviate(joined));
        }
        Map<String, String> m = new LinkedHashMap<>(16);
        for (int i = 0; i < FIELDS.length; i++) {
            m.put(FIELDS[i], parts[i]);
        }
        if (parts.length >= WINDOW_AND_MODE_FIELDS) {
            if (!parts[FIELDS.length].isEmpty()) {
                m.put(StateCodec.WINDOW, parts[FIELDS.length]);
            }
            m.put(StateCodec.MODE, parts[FIELDS.length + 1]);
        }
        if (parts.length == CONTRIBUTORS_COMPONENTS) {
            m.put(StateCodec.CONTRIBUTORS, parts[WINDOW_AND_MODE_FIELDS]);
        }
        return m;
    }

    private static String text(Object o) {
        return o instanceof byte[] ? new String((byte[]) o, java.nio.charset.StandardCharsets.UTF_8) : String.valueOf(o);
    }

    /**
     * Appends the event to the feed stream. The state change is already committed, so a failure here is not
     * thrown: the caller still learns its result. It is not silent either: every subscriber of this instance
     * gets {@code onGap} at once (on this thread), and a gap marker is appended to the stream at this
     * instance's next successful command, so other instances' readers signal a gap too.
     */
    private void publish(TransitionEvent event) {
        List<String> args = new ArrayList<>(32);
        args.add(Long.toString(feedMaxLength));
        args.add(Long.toString(feedTtlMillis));
        for (Map.Entry<String, String> f : StateCodec.eventToFields(event).entrySet()) {
            args.add(f.getKey());
            args.add(f.getValue());
        }
        try {
            // a duplicate entry is harmless: readers drop an event whose version they already delivered
            attempt(Repeat.IDEMPOTENT, () -> lua.run(LuaLibrary.Fn.PUBLISH, List.of(keys.feed()), args));
        } catch (JedisException e) {
            gapMarkerPending.set(true);
            LOG.warn("redeye could not publish the {} transition of '{}' (version {}) on {}: {}; signalling a gap"
                    + " to this instance's subscribers, and to every reader once the stream accepts a marker",
                    event.kind().wireName(), OperationNames.abbreviate(event.operation()), event.version(),
                    OperationNames.abbreviate(keys.feed()), e.toString());
            FeedReader r = reader;
            if (r != null) {
                r.signalGap();
            }
        }
    }

    /**
     * After an event could not be published: appends a gap marker entry (field {@value FeedReader#GAP_FIELD})
     * so every reader of the stream, in every process, signals a gap. Tried once per successful command
     * until it succeeds; costs nothing while no publish has failed.
     */
    private void appendGapMarkerIfPending() {
        if (!gapMarkerPending.get() || !gapMarkerPending.compareAndSet(true, false)) {
            return;
        }
        try {
            lua.run(LuaLibrary.Fn.PUBLISH, List.of(keys.feed()), List.of(Long.toString(feedMaxLength),
                    Long.toString(feedTtlMillis), FeedReader.GAP_FIELD, feedClientName));
            LOG.info("redeye appended a gap marker to {} after a failed publish", OperationNames.abbreviate(keys.feed()));
        } catch (JedisException e) {
            gapMarkerPending.set(true);
            LOG.debug("redeye could not append a gap marker yet: {}", e.toString());
        }
    }

    /**
     * Runs one command with the store's failure handling: Jedis exceptions become {@link StoreException}; a
     * command is sent a second time as {@link #attempt} allows.
     */
    private <T> T call(String what, String key, Repeat repeat, Supplier<T> body) {
        T result;
        try {
            result = attempt(repeat, body);
        } catch (JedisException e) {
            String msg = String.valueOf(e.getMessage());
            if (msg.startsWith(MALFORMED)) {
                throw new StoreException("malformed breaker state at " + where(key) + ": "
                        + msg.substring(MALFORMED.length()).trim(), e);
            }
            if (msg.startsWith("WRONGTYPE")) {
                throw new StoreException("malformed data at " + where(key)
                        + ": a key of this operation holds another Redis type (" + msg + ")", e);
            }
            if (closed.get()) {
                throw new StoreException("RedisStore is closed", e);
            }
            throw new StoreException("redis " + what + " failed at " + where(key) + ": " + msg, e);
        }
        appendGapMarkerIfPending();
        return result;
    }

    /**
     * Sends a command; on failure decides by {@link RedisFailures} whether to send it once more. A broken
     * connection (or a refused one) first drops the pool's idle connections: they are as old as the one that
     * broke and most likely stale too (a server restart). Then the command is re-sent when the server proved
     * it did not run it (MOVED / ASK, connection refused), or, after a broken connection, when it is
     * {@link Repeat#IDEMPOTENT}. A timeout is never retried: the command may still run, and a retry would
     * double the caller's wait. So writes that count (the state function) are at most once.
     */
    private <T> T attempt(Repeat repeat, Supplier<T> body) {
        try {
            return body.get();
        } catch (JedisException first) {
            RedisFailures kind = RedisFailures.of(first);
            if (kind == RedisFailures.BROKEN || kind == RedisFailures.NOT_RUN) {
                dropIdleConnections();
            }
            boolean again = kind == RedisFailures.NOT_RUN
                    || (kind == RedisFailures.BROKEN && repeat == Repeat.IDEMPOTENT);
            if (!again || closed.get()) {
                throw first;
            }
            LOG.debug("redeye: re-sending a command once after {} ({})", kind, first.toString());
            try {
                return body.get();
            } catch (JedisException second) {
                second.addSuppressed(first);
                throw second;
            }
        }
    }

    private void dropIdleConnections() {
        if (client instanceof JedisPooled) {
            try {
                ((JedisPooled) client).getPool().clear();
            } catch (RuntimeException e) {
                LOG.debug("redeye: clearing idle pool connections failed", e);
            }
        }
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new StoreException("RedisStore is closed");
        }
    }

    private String where(String key) {
        return "operation '" + OperationNames.abbreviate(key) + "' (redis key " + OperationNames.abbreviate(keys.state(key))
                + ")";
    }

    /** A positive ttl in ms, at least 1 and at most {@link #MAX_TTL_MILLIS} (a longer one is capped). */
    private static long ttlMillis(Duration ttl) {
        Arguments.positive("ttl", ttl);
        if (ttl.compareTo(MAX_TTL) > 0) {
            return MAX_TTL_MILLIS; // also keeps toMillis() from overflowing
        }
        long ms = ttl.toMillis();
        return ms == 0 ? 1 : ms;
    }

    /**
     * Builder for {@link RedisStore}. Each setter validates its argument at once and throws
     * {@link NullPointerException} or {@link IllegalArgumentException} naming it. Not thread-safe.
     */
    public static final class Builder {
        private final UnifiedJedis client;
        private String prefix = "";
        private boolean closeClient;
        private HostAndPort feedAddress;
        private JedisClientConfig feedConfig;
        private long feedMaxLength = 10_000;
        private Duration feedTtl = Duration.ofDays(7);
        private Duration feedBlock = Duration.ofSeconds(2);
        private Duration backoffMin = Duration.ofMillis(100);
        private Duration backoffMax = Duration.ofSeconds(10);
        private LuaLibrary library;
        private int waitReplicas;
        private Duration waitTimeout = Duration.ofSeconds(1);
        private LuaRunner.Mode scripting = LuaRunner.Mode.AUTO;
        private boolean publishInScript;

        private Builder(UnifiedJedis client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /**
         * Prefix of every key (default empty), for example {@code "myapp:"}. Braces are Redis Cluster hash
         * tags: {@code "myapp{x}:"} puts every key of the store in one slot (one node), and a prefix whose first
         * <code>{</code> is followed at once by <code>}</code> ({@code "myapp{}:"}) is refused, since Redis would
         * then hash each whole key and spread one operation's keys over several slots (see the package
         * Javadoc).
         *
         * @throws NullPointerException     if {@code prefix} is null
         * @throws IllegalArgumentException if the prefix has an empty hash tag first or is not well-formed
         *                                  UTF-16, saying why
         */
        public Builder prefix(String prefix) {
            this.prefix = RedisKeys.checkPrefix(prefix);
            return this;
        }

        /** Whether {@link RedisStore#close()} also closes the client (default false: the caller owns it). */
        public Builder closeClient(boolean closeClient) {
            this.closeClient = closeClient;
            return this;
        }

        /**
         * Connection details for the dedicated feed connection (address, credentials, database, TLS). The
         * client name and blocking timeout are set by the store. Without them the store borrows a connection
         * from a {@link JedisPooled} or a {@link JedisCluster} (see the class Javadoc).
         *
         * @throws NullPointerException if an argument is null
         */
        public Builder feedConnection(HostAndPort address, JedisClientConfig config) {
            this.feedAddress = Objects.requireNonNull(address, "address");
            this.feedConfig = Objects.requireNonNull(config, "config");
            return this;
        }

        /**
         * Approximate maximum number of entries kept in the feed stream (XADD MAXLEN ~), default 10,000.
         *
         * @throws IllegalArgumentException if below 1
         */
        public Builder feedMaxLength(long maxLength) {
            this.feedMaxLength = Arguments.atLeast("feedMaxLength", maxLength, 1);
            return this;
        }

        /**
         * Clean-up TTL of the feed stream key, refreshed on every event; default 7 days.
         *
         * @throws IllegalArgumentException if below one second
         */
        public Builder feedTtl(Duration ttl) {
            this.feedTtl = Arguments.atLeast("feedTtl", ttl, Duration.ofSeconds(1), "1 s");
            return this;
        }

        /**
         * How long one XREAD BLOCK waits before it is reissued (default 2 s). It also bounds how long a
         * silently dead connection (a network partition) goes unnoticed: whatever the feed connection's
         * source, every read runs with a socket timeout of this block time plus a margin (the larger of 1 s
         * and half the block time), after which the reader signals a gap and reconnects. close() is
         * immediate regardless.
         *
         * @throws IllegalArgumentException if not within 10 ms .. 60 s
         */
        public Builder feedBlock(Duration block) {
            Objects.requireNonNull(block, "feedBlock");
            if (block.toMillis() < 10 || block.toMillis() > 60_000) {
                throw new IllegalArgumentException("feedBlock must be within 10 ms .. 60 s, was " + block);
            }
            this.feedBlock = block;
            return this;
        }

        /**
         * Reconnect backoff of the feed reader: starts at {@code min}, doubles per failed attempt up to
         * {@code max}; default 100 ms .. 10 s.
         *
         * @throws IllegalArgumentException if {@code min} is below 1 ms or {@code max < min}
         */
        public Builder feedBackoff(Duration min, Duration max) {
            Objects.requireNonNull(min, "min");
            Objects.requireNonNull(max, "max");
            if (min.toMillis() < 1 || max.compareTo(min) < 0) {
                throw new IllegalArgumentException("feedBackoff needs 1 ms <= min <= max, was " + min + " .. " + max);
            }
            this.backoffMin = min;
            this.backoffMax = max;
            return this;
        }

        /**
         * Whether the state script appends the event of an automatic transition (opened, reopened, closed,
         * would_open) to the feed stream itself, saving the second round trip (default false; {@link RedisStore#open} turns it
         * on for a standalone server). Only for a standalone or replicated server: the feed stream is in another
         * hash slot than the operations' keys, which Redis Cluster refuses in one script, so a
         * {@link JedisCluster} client ignores it. Forced changes are always published by a second call.
         */
        public Builder publishInScript(boolean publishInScript) {
            this.publishInScript = publishInScript;
            return this;
        }

        /**
         * After every transition (opened, reopened, closed, would_open, forced, mode_changed), wait until {@code replicas} replicas
         * acknowledged it ({@code WAIT replicas timeout} on the connection that wrote it), at most
         * {@code timeout}; fewer acknowledgements by then make the call fail with {@link StoreException} (the
         * transition is applied on the primary, and published, but a fail-over before the replicas have it
         * would lose it). Off by default (0): Redis replicates asynchronously, so a fail-over can lose the
         * last transitions a primary acknowledged (see the README's "Running it in production"). Recorded
         * outcomes below a transition never wait. Costs one round trip plus the replicas' delay per transition.
         * Needs a {@link JedisPooled} or a {@link JedisCluster} client; keep {@code timeout} below the client's
         * socket timeout, which bounds the WAIT's reply too.
         *
         * @throws IllegalArgumentException if {@code replicas} is negative or {@code timeout} is not within
         *                                  1 ms .. 1 hour
         */
        public Builder waitReplicas(int replicas, Duration timeout) {
            Objects.requireNonNull(timeout, "waitTimeout");
            if (replicas < 0) {
                throw new IllegalArgumentException("waitReplicas must be >= 0, was " + replicas);
            }
            if (timeout.toMillis() < 1 || timeout.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("waitTimeout must be within 1 ms .. 1 h, was " + timeout);
            }
            this.waitReplicas = replicas;
            this.waitTimeout = timeout;
            return this;
        }

        /**
         * Runs another copy of the Lua library: package-private, for the test that plants a divergence from
         * {@code Transitions} in a copy and shows the TCK's model rules find and shrink it. Never in production.
         */
        Builder library(LuaLibrary library) {
            this.library = Objects.requireNonNull(library, "library");
            return this;
        }

        /**
         * How the Lua runs (package-private, for tests): {@link LuaRunner.Mode#AUTO} (the default) uses Redis
         * Functions where the server offers them; {@link LuaRunner.Mode#SCRIPTS} runs EVALSHA only, as on a
         * server without them.
         */
        Builder scripting(LuaRunner.Mode mode) {
            this.scripting = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** Builds the store; connects nothing yet (the feed connection opens on the first subscribe). */
        public RedisStore build() {
            return new RedisStore(this);
        }
    }
}
