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
 * <tr><td><code>myapp:{payment-gateway}:state</code></td><td>string</td>
 * <td>the {@link dev.redeye.api.BreakerState} as one value: its ten components in this order, joined by
 * {@code ,}, each in {@link dev.redeye.spi.support.StateCodec}'s encoding: {@code failures}, {@code lastFailureAt},
 * {@code open} ({@code 0}/{@code 1}), {@code openedAt}, {@code openCount}, {@code errorRate} (17 significant
 * digits, or Java's {@code Double.toString} after {@code put}; round-trips bit-exactly), {@code samples},
 * {@code trialSuccesses}, {@code forced} ({@code 0}/{@code 1}), {@code version}; times are epoch
 * milliseconds. A state with a sliding window or a stored mode has twelve: those ten, then {@code window}
 * ({@link dev.redeye.api.SlidingWindow#encode()}, empty when there is none) and {@code mode}
 * ({@link dev.redeye.api.BreakerMode#code()}); a state with neither keeps the ten fields, the value the previous
 * release reads too. That release's library and store refuse a twelve-field value as malformed ("the value has 12
 * comma-separated fields, not 10": a {@link dev.redeye.api.StoreException} to its breakers, the value left as it
 * is) rather than read the state without its window or mode, so a window policy or a mode is rolled out once
 * every instance sharing the prefix runs this release. A state with quorum contributions
 * ({@link dev.redeye.api.BreakerState#contributors()}, kept under a policy with a quorum) has those twelve (the
 * window empty and the mode 0 when it has neither) and then {@code contributors}
 * ({@link dev.redeye.api.Contribution#encodeAll}: {@code instance,failures,calls,lastAt} per instance, most recent
 * first, joined by {@code ;}, never empty), for example {@code 3,1764500000123,0,0,0,0,0,0,0,1764500000123456,,0,
 * pod-b,1,1,1764500000123;pod-a,2,2,1764500000100}; a state without them keeps the ten or twelve fields. The
 * releases before quorums refuse such a value as malformed ("the value has 16 comma-separated fields, not 10 (or
 * 12 ...)", and their {@code put} and {@code get} likewise) rather than read it without its contributions and
 * write it back without them, and refuse a policy with a quorum (its text has fifteen fields) as bad arguments: so
 * a quorum is rolled out once every instance sharing the prefix runs this release. A key created by an atomic operation starts its life at the server clock in
 * <b>microseconds</b> ({@code TIME}), so {@code version} reads like {@code 1764500000123456} and moves by one
 * per transition (see "Contract v2" below). Read with one {@code GET}, written whole with one
 * {@code SET ... PX}. A key written by a release before this layout holds a hash with one field per
 * component (same names): it is read as it is (by {@code get} and by every function) and replaced with the
 * value by the first write of the state, in the same call; an instance of such a release reads a converted
 * key as data of another type, a {@link dev.redeye.api.StoreException} (see the README's upgrade notes)</td>
 * <td>{@code Policy.stateTtl} on atomic writes, the given ttl on {@code put}; refreshed on every write,
 * clean-up only. <b>None while the state is pinned</b> ({@link dev.redeye.api.BreakerState#pinned()}:
 * {@code forced = 1}, or a stored {@code mode} other than 0): the key is stored without expiry by {@code put} of a
 * pinned state, by force OPEN, by storing a mode (force_mode, or an opening forced under a policy mode other than
 * NORMAL, which stores NORMAL) and by every write while it stays pinned ({@code SET} without {@code PX}, or
 * {@code PERSIST} when the value is unchanged), since an operator's decision must not lapse back to the
 * configured behaviour and, while forced, no call refreshes it; the ttl applies again from the first write that
 * leaves it unpinned (reset / force CLOSED / force_mode DEFAULT)</td></tr>
 * <tr><td><code>myapp:{payment-gateway}:trial1</code></td><td>string</td>
 * <td>the one live trial claim of a breaker with one half-open permit: the claim token, written with
 * {@code SET NX PX}</td><td>the claim's ttl (PX)</td></tr>
 * <tr><td><code>myapp:{payment-gateway}:trial</code></td><td>sorted set</td>
 * <td>live trial claims of a breaker with several permits: member = claim token, score = expiry in epoch
 * ms of the Redis server's clock</td><td>the longest claim's ttl</td></tr>
 * <tr><td><code>myapp:redeye:feed</code></td><td>stream</td>
 * <td>one entry per transition (or a gap marker {@code gap <feed client name>}, see below): {@code op} (the
 * operation name, exact), {@code kind}
 * ({@link dev.redeye.api.TransitionKind#wireName()}), {@code from} ({@link dev.redeye.api.BreakerStatus#code()})
 * and the new state's fields as {@link dev.redeye.spi.support.StateCodec#toFields} names them ({@code window},
 * {@code mode} and {@code contributors} only when set); trimmed with {@code MAXLEN ~ 10000}</td>
 * <td>7 days, refreshed on every entry</td></tr>
 * </table>
 * <pre>
 * redis-cli GET 'myapp:{payment-gateway}:state'            ("2,1764500000123,0,0,0,0,0,0,0,1764500000123456")
 * redis-cli --raw GET 'myapp:{payment-gateway}:state' | tr , '\n'    (one field per line, in the order above)
 * redis-cli PTTL 'myapp:{payment-gateway}:state'          (-1 while forced)
 * redis-cli GET 'myapp:{payment-gateway}:trial1'
 * redis-cli ZRANGE 'myapp:{payment-gateway}:trial' 0 -1 WITHSCORES
 * redis-cli XREVRANGE myapp:redeye:feed + - COUNT 10
 * </pre>
 *
 * <h2>Hash tags and hostile names</h2>
 * The part between the braces is the operation's hash tag: the name with {@code %}, <code>{</code> and
 * <code>}</code> percent-encoded ({@code %25}, {@code %7B}, {@code %7D}), and {@code %} alone for the empty
 * name. So {@code a}, {@code a:trial}, <code>a}</code> and <code>{a</code> map to
 * <code>{a}</code>, <code>{a:trial}</code>, <code>{a%7D}</code> and <code>{%7Ba}</code>: distinct keys, and the
 * state key and both claim keys of one operation share a Cluster slot, so each script touches one slot only.
 * Braces in the <b>prefix</b> are hash tags too, and Redis uses the first one: a prefix with a closed,
 * non-empty tag ({@code myapp{x}:}) puts every key of the store, the feed stream included, in the slot of
 * {@code x} (one node holds them all); a prefix whose first <code>{</code> is not closed inside it
 * ({@code myapp{:}) makes Redis hash the rest of the prefix with the tagged name, still one slot per
 * operation; a prefix whose first <code>{</code> is followed at once by <code>}</code> ({@code myapp{}:}) is
 * <b>refused</b> ({@link java.lang.IllegalArgumentException} from the builder and the URI): Redis ignores an
 * empty tag and hashes each whole key, so one operation's keys would land in three slots and every script
 * would fail with CROSSSLOT. Any other character (spaces, newlines, quotes, non-BMP, U+0000) is kept as is; keys and values
 * are UTF-8. A name that is not well-formed UTF-16 (an unpaired surrogate, which UTF-8 cannot encode and
 * Jedis would turn into {@code ?}, merging {@code "a"} plus an unpaired U+D800 with {@code "a?"}) is refused with
 * {@link java.lang.IllegalArgumentException} naming its index.
 *
 * <h2>Faults</h2>
 * Bounds, retries (writes that count are at most once), stale-connection handling, TLS verification,
 * eviction warnings and cluster detection are described on {@link dev.redeye.store.redis.RedisStore},
 * {@link dev.redeye.store.redis.RedisStoreProvider} and in the module README ("Faults and bounds").
 *
 * <h2>The Lua library</h2>
 * Every server-side step is one function of one Lua library, {@code redeye.lua}, a resource next to this
 * package read once: {@code state} (every atomic state change: every strategy, slow calls, trial outcomes,
 * operators' changes and modes), {@code record} (recorded outcomes, slow ones and in-flight slow calls, with a
 * smaller interface), {@code outcomes} (a batch of one instance's recorded outcomes,
 * {@link dev.redeye.spi.OutcomeBatches}: the general path's rule of a recorded outcome folded over them in order,
 * each at its own instant, the state written once and the first transition reported; the value keeps the layout
 * above, so a release before batches, which never sends one, reads it as its own), {@code claim}, {@code release},
 * {@code put} and {@code publish}. Where the server offers
 * <b>Redis Functions</b> (Redis 7+) the library is loaded once per server ({@code FUNCTION LOAD}, as
 * {@code redeye_<hash of the library>}, never replacing another version's) and each call is one
 * {@code FCALL}; a server that answers {@code Function not found} (a fresh or restarted server, {@code FUNCTION
 * FLUSH}) gets the library loaded again and the call sent again (it had not run). Where FCALL is unknown
 * (Redis before 7) or refused by an ACL, or {@code FUNCTION LOAD} is, each function runs as an EVAL script
 * (EVALSHA, loaded again on NOSCRIPT); the choice follows the server's answers and costs no round trip. The
 * library is registered without flags: each function may write, so Redis refuses it before it runs (rather
 * than at its first write) on a read-only replica or over {@code maxmemory}. The state function is the Lua
 * twin of {@link dev.redeye.spi.Transitions}: same rules, same IEEE double operations in the same order for the
 * error-rate EWMA ({@code decay * rate + (1 - decay) * x}), version moved only on a transition to
 * {@code max(version, 0) + 1}, the sliding window's trip test with Java's IEEE double comparison
 * ({@code failures * 100 >= failureRateThreshold * calls}), its window in {@code SlidingWindow}'s canonical text
 * (a time window rolled by the caller's {@code now}, a late outcome counted in the newest bucket), the modes
 * (DISABLED records nothing, METRICS_ONLY turns every opening into {@code would_open} and resets the counters),
 * and quorums (each attributed outcome updates its instance's contribution in the scope, at most 16, the least
 * recent dropped; an opening of the consecutive or sliding-window strategy needs the quorum of failing instances,
 * with {@code Policy.quorumRequired}'s rounding; the record function takes the outcome's instance, sent only under a
 * quorum); its rules never read the server clock ({@code now} is an argument; the one
 * {@code TIME} it calls is for the version base of a new key). Its record path (an outcome that leaves a closed
 * state closed, most of what it runs) reads, writes and formats only what that outcome needs; the rule it
 * applies is the one the general path applies; so does its window record path (an outcome a closed window records
 * without tripping). Under a policy with a quorum both are bypassed (the general path keeps the contributions);
 * without one they run as they did, for every state without contributions (a state with some, kept under a quorum,
 * takes the general path, which carries them through as {@code Transitions} does). It validates the stored value before changing anything: another type, a value that is not
 * ten (or twelve, or twelve and contributions) comma-separated fields (or a hash of an earlier release without the
 * fields), a field that is not a number in range, a window that is not {@code SlidingWindow}'s canonical text, or
 * contributions that {@code Contribution.decodeAll} refuses (or empty) is an error that the store reports as
 * {@link dev.redeye.api.StoreException}, leaving the data as it found it.
 *
 * <h2>Trial claims</h2>
 * Two keys per operation, in one slot, and one function each way. With <b>one permit</b> {@code claim} fails
 * if the sorted set holds any live member (a breaker with more permits sharing the operation), and otherwise
 * runs {@code SET <prefix>{tag}:trial1 token NX PX ttl}. With <b>several permits</b> it drops the sorted set's
 * members whose expiry score has passed, counts the live members plus one if the {@code :trial1} claim
 * exists, and adds the new token (score = expiry) only below {@code permits}, extending the set's TTL to its
 * longest claim. So breakers with different permits on one operation never hold more live claims than the
 * larger limit, and never more than one when a one-permit breaker won. Expiry is judged by the server's
 * clock ({@code TIME} and {@code PX} inside the script): Redis 7 replicates a script's effects, so replicas
 * and a promoted primary hold the same absolute expiries and no client clock is involved. Release is
 * {@code release}, a compare-and-delete: {@code DEL :trial1} only if it still holds the token, else
 * {@code ZREM :trial token}; a stale, expired or unknown token frees nothing. {@code delete}, force
 * CLOSED and force HALF_OPEN remove both claim keys. Data of another type under a claim key is a
 * {@link dev.redeye.api.StoreException}.
 *
 * <h2>Contract v2</h2>
 * <ul>
 * <li><b>Trial fencing.</b> {@code trialSucceeded} / {@code trialFailed} carry the version of the open
 * period their trial was admitted under; the state function applies an outcome only when the state is open,
 * not forced and still at that version, else returns the current state unchanged. A late success never
 * closes a breaker that reopened since, and K failing trials of one period reopen it once.</li>
 * <li><b>Quiet clears.</b> A success clearing sub-threshold failures writes {@code failures = 0} with the same
 * version and publishes nothing; only transitions move the version and reach the stream.</li>
 * <li><b>Version bases.</b> Versions of a key never go backwards, also after {@code DEL} or expiry: when the
 * state key does not exist, the state function starts the new life at {@code TIME} in microseconds
 * ({@code redis.replicate_commands()} first, which Redis before 5 needs before {@code TIME}; a no-op on Redis
 * 7). Each earlier life started at an earlier {@code TIME} and moved by one per transition, and no two
 * transitions of a key are a microsecond apart. Lua numbers are doubles, exact below 2^53; microsecond
 * epochs (about 1.8e15) are far below it. Two limits: a server clock stepped backwards by more than the
 * time since the key's last life, or a version written by {@code put} above the clock, can make a new life
 * start lower (neither happens through the engine, which writes only versions this store produced).</li>
 * <li><b>Ttl refresh.</b> Every atomic write that writes sets the ttl {@code stateTtl} again ({@code SET ...
 * PX}), measured from that write; an unchanged call (a no-op success, a fenced-out outcome) writes and
 * refreshes nothing; a pinned state (forced, or with a stored mode) is stored without expiry instead
 * ({@code SET} without {@code PX}, or {@code PERSIST} when unchanged).</li>
 * <li><b>Event order.</b> Each subscriber gets the events of one operation in increasing version order; see
 * the feed reader below.</li>
 * </ul>
 *
 * <h2>Where the feed is published: in the state script on a standalone server, else after it</h2>
 * On a standalone (or replicated) server opened from a URI ({@code publishInScript}), the state function gets
 * the stream as a fourth key and appends the event of an automatic transition (opened, reopened, closed,
 * would_open, whose from-status its kind fixes) itself, in the same script: one round trip for the opening instead of
 * two, and no window between the state write and its event. The append runs under {@code redis.pcall}: if
 * the stream refuses it (an ACL, a key of another type) the state change stays committed and the store
 * publishes from Java as below, which signals the gap.
 *
 * <p>A Cluster script may only touch keys of one slot, and the state keys of different operations are spread
 * over all slots, while subscribers need one stream to read. Writing the stream from inside the state
 * script would force a cross-slot script; one stream per slot tag would make every subscriber read an
 * unbounded, unknown set of streams. So on a Cluster (and for forced changes, whose from-status depends on the
 * policy and the clock, and with {@code publishInScript} off), when the state function reports a transition
 * the store appends the event to the single per-prefix stream with a second small script (XADD + PEXPIRE, one
 * key). The cost is a window between the state write and the XADD: if the process dies or Redis becomes unreachable in between,
 * that one event is lost (the state itself is committed and every reader still sees it on its next read;
 * the engine's local cache also re-polls entries older than 5 s). A failed XADD never fails the caller's
 * call, and is not silent: the subscribers of the store instance that failed get {@code onGap} at once, and
 * the instance appends a <b>gap marker</b> (an entry with the single field {@code gap}, its feed client name)
 * at its next successful command, on which every reader in every process signals {@code onGap}. Readers
 * cannot learn of an event lost with a dying process; a version jump of more than one between two events of
 * an operation hints at one (not proof: a key that expired starts a new life at the server clock). The second call also means that two clients' transitions of one operation
 * can reach the stream swapped (A's script, B's script, B's XADD, A's XADD): the reader restores the order
 * (below).
 *
 * <h2>The feed reader</h2>
 * Each store instance has at most one reader thread (started by the first subscription), blocking in
 * {@code XREAD BLOCK} on one dedicated connection named with CLIENT SETNAME (see
 * {@link dev.redeye.store.redis.RedisStore#feedClientName()}), and fans each entry out to every subscriber of
 * the instance, per operation in increasing version order: an entry whose version is not above the last one
 * delivered for its operation is obsolete (a newer state was delivered already) and is dropped
 * ({@link dev.redeye.spi.support.FeedSubscribers#inVersionOrder}, which remembers the last version of the 10,000 most
 * recently published operations). A subscriber that throws is logged and stays subscribed. When the connection drops or a read
 * fails, every subscriber's {@code onGap} runs, then the reader reconnects with exponential backoff and
 * resumes after the last entry it delivered. {@code close()} disconnects the connection (which ends a pending
 * XREAD at once) and joins the thread.
 *
 * <p>Every read is bounded, whatever supplied the connection: Jedis would give a command it knows as
 * blocking the client's blocking socket timeout (infinite unless configured), so a silently dead TCP
 * connection (a partition, no RST) would hang the reader for good. The reader sends XREAD as a plain command
 * and sets the connection's socket timeout to the block time ({@code feedBlock}, default 2 s) plus the larger
 * of 1 s and half of it; a read without an answer by then fails, signals a gap and reconnects.
 *
 * <p>The stream is trimmed ({@code MAXLEN ~ feedMaxLength}), so a reader that falls that far behind while
 * connected (a slow subscriber) would skip trimmed entries. When a read returns a full batch (256 entries, or
 * {@code feedMaxLength} if smaller), the reader reads the stream's first entry id ({@code XRANGE - + COUNT
 * 1}); if it is newer than the last entry read before, it signals a gap (a false positive is harmless).
 */
package dev.redeye.store.redis;
