/**
 * The Redis store of redeye: every capability natively on Redis through Jedis, for standalone servers,
 * replicated set-ups and Redis Cluster. Entry points: {@link dev.redeye.store.redis.RedisStore} (over your
 * own {@code JedisPooled} / {@code JedisCluster}) and {@link dev.redeye.store.redis.RedisStoreProvider}
 * ({@code Stores.open("redis://host:6379?prefix=myapp:")}).
 *
 * <h2>Stored layout (what {@code redis-cli} shows)</h2>
 * For an operation named {@code payment-gateway} and the prefix {@code myapp:}:
 * <table>
 * <caption>Keys</caption>
 * <tr><th>key</th><th>type</th><th>content</th><th>TTL</th></tr>
 * <tr><td><code>myapp:{payment-gateway}:state</code></td><td>hash</td>
 * <td>the {@link dev.redeye.api.BreakerState}, one field per component with
 * {@link dev.redeye.api.StateCodec}'s names: {@code failures}, {@code lastFailureAt}, {@code open}
 * ({@code 0}/{@code 1}), {@code openedAt}, {@code openCount}, {@code errorRate} (17 significant digits,
 * round-trips bit-exactly), {@code samples}, {@code trialSuccesses}, {@code forced} ({@code 0}/{@code 1}),
 * {@code version}; times are epoch milliseconds</td>
 * <td>{@code Policy.stateTtl} on atomic writes, the given ttl on {@code put}; refreshed on every write,
 * clean-up only</td></tr>
 * <tr><td><code>myapp:{payment-gateway}:trial</code></td><td>sorted set</td>
 * <td>live half-open trial claims: member = claim token, score = expiry in epoch ms of the Redis server's
 * clock</td><td>the longest claim's ttl</td></tr>
 * <tr><td><code>myapp:redeye:feed</code></td><td>stream</td>
 * <td>one entry per transition: {@code op} (the operation name, exact), {@code kind}
 * ({@link dev.redeye.api.TransitionKind#wireName()}), {@code from} ({@link dev.redeye.api.BreakerStatus#code()})
 * and the new state's fields; trimmed with {@code MAXLEN ~ 10000}</td>
 * <td>7 days, refreshed on every entry</td></tr>
 * </table>
 * <pre>
 * redis-cli HGETALL 'myapp:{payment-gateway}:state'
 * redis-cli ZRANGE 'myapp:{payment-gateway}:trial' 0 -1 WITHSCORES
 * redis-cli XREVRANGE myapp:redeye:feed + - COUNT 10
 * </pre>
 *
 * <h2>Hash tags and hostile names</h2>
 * The part between the braces is the operation's hash tag: the name with {@code %}, <code>{</code> and
 * <code>}</code> percent-encoded ({@code %25}, {@code %7B}, {@code %7D}), and {@code %} alone for the empty
 * name. So {@code a}, {@code a:trial}, <code>a}</code> and <code>{a</code> map to
 * <code>{a}</code>, <code>{a:trial}</code>, <code>{a%7D}</code> and <code>{%7Ba}</code>: distinct keys, and the
 * state and claims keys of one operation always share a Cluster slot, so each script touches one slot only.
 * Any other character (spaces, newlines, quotes, non-BMP) is kept as is; keys and values are UTF-8.
 *
 * <h2>Scripts</h2>
 * {@code state.lua} (every atomic state change: both recording strategies, trial outcomes, forced changes),
 * {@code claim.lua}, {@code put.lua} and {@code publish.lua} live next to this package as resources, are read
 * once, run with EVALSHA, and are loaded again (SCRIPT LOAD, then EVALSHA once more) when the server answers
 * NOSCRIPT, for example after SCRIPT FLUSH or a fail-over. {@code state.lua} is the Lua twin of
 * {@link dev.redeye.api.Transitions}: same rules, same IEEE double operations in the same order for the
 * error-rate EWMA ({@code decay * rate + (1 - decay) * x}), version moved only on a transition to
 * {@code max(version, 0) + 1}; it never reads the server clock ({@code now} is an argument). It validates the
 * stored hash before changing anything: another type, a hash without the fields, or a field that is not a
 * number in range is an error that the store reports as {@link dev.redeye.api.StoreException}, leaving the
 * data as it found it.
 *
 * <h2>Trial claims</h2>
 * One sorted set per operation for any number of permits: {@code claim.lua} drops members whose expiry score
 * has passed, adds the new token if fewer than {@code permits} remain, and sets the key's TTL to cover its
 * longest claim. Expiry is judged by the server's clock ({@code TIME} inside the script): Redis 7 replicates a
 * script's effects, so replicas and a promoted primary hold the same absolute scores and no client clock is
 * involved. Release is {@code ZREM key token}: removal by member value is an atomic compare-and-delete in
 * Redis itself, so a stale or unknown token removes nothing but itself.
 *
 * <h2>Why the feed is published from Java, after the script</h2>
 * A Cluster script may only touch keys of one slot, and the state keys of different operations are spread
 * over all slots, while subscribers need one stream to read. Writing the stream from inside the state
 * script would force a cross-slot script; one stream per slot tag would make every subscriber read an
 * unbounded, unknown set of streams. So when {@code state.lua} reports a transition the store appends the
 * event to the single per-prefix stream with a second small script (XADD + PEXPIRE, one key). The cost is a
 * window between the state write and the XADD: if the process dies or Redis becomes unreachable in between,
 * that one event is lost (the state itself is committed and every reader still sees it on its next read;
 * the engine's local cache also re-polls entries older than 5 s). A failed XADD is logged as a warning and
 * never fails the caller's call.
 *
 * <h2>The feed reader</h2>
 * Each store instance has at most one reader thread (started by the first subscription), blocking in
 * {@code XREAD BLOCK} on one dedicated connection named with CLIENT SETNAME (see
 * {@link dev.redeye.store.redis.RedisStore#feedClientName()}), and fans each entry out to every subscriber of
 * the instance. A subscriber that throws is logged and stays subscribed. When the connection drops or a read
 * fails, every subscriber's {@code onGap} runs, then the reader reconnects with exponential backoff and
 * resumes after the last entry it delivered. {@code close()} disconnects the connection (which ends a pending
 * XREAD at once) and joins the thread.
 */
package dev.redeye.store.redis;
