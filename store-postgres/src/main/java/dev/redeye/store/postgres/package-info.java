/**
 * The PostgreSQL store of redeye: {@link dev.redeye.store.postgres.PostgresStore} (over your own
 * {@code DataSource} or {@code Jdbi}) and {@link dev.redeye.store.postgres.PostgresStoreProvider} (for
 * {@code postgresql://} and {@code jdbc:postgresql://} URIs).
 *
 * <h2>Stored layout (layouts 1, 2 and 3)</h2>
 * Three tables in the configured schema (default {@code public}), named after the configured table (default
 * {@code redeye_breakers}); the DDL ships as the resource {@code dev/redeye/store/postgres/schema.sql}
 * and {@link dev.redeye.store.postgres.PostgresStore#schemaSql(String, String)}.
 *
 * <table>
 * <caption>{@code <table>}: one row per operation name</caption>
 * <tr><th>column</th><th>type</th><th>meaning</th></tr>
 * <tr><td>{@code key_hash}</td><td>bytea, primary key</td><td>{@code sha256(convert_to(key, 'UTF8'))}: the
 * row's identity, so names of any length and content are one btree key</td></tr>
 * <tr><td>{@code key}</td><td>text</td><td>the operation name exactly as the user wrote it (bound as a
 * parameter, never spliced into SQL)</td></tr>
 * <tr><td>{@code layout}</td><td>smallint</td><td>1 for a state without a sliding window and with the
 * {@code DEFAULT} mode (what the releases before sliding windows wrote and read); 2 for a state with a sliding
 * window or a stored mode (see <a href="#upgrade">Upgrade order</a>); 3 for a state with a quorum's
 * contributions, with or without a window or a mode (see <a href="#upgrade-quorum">Upgrade order: quorum
 * opening</a>); 0 for the store's placeholder, a row without state created to hold trial claims or a row lock,
 * written with every state column at its default, and read as absent; a layout-0 row with any other value in a
 * state column, a layout 1, 2 or 3 that does not match the row's window, mode and contributions, and any other
 * layout, is malformed: a {@code StoreException}, never read as absent, never written over</td></tr>
 * <tr><td>{@code failures}, {@code open_count}, {@code trial_successes}</td><td>integer</td>
 * <td>the {@code BreakerState} counters</td></tr>
 * <tr><td>{@code last_failure_at}, {@code opened_at}</td><td>bigint</td><td>epoch ms (virtual time passed
 * in by the caller)</td></tr>
 * <tr><td>{@code open}, {@code forced}</td><td>boolean</td><td>the flags</td></tr>
 * <tr><td>{@code error_rate}</td><td>double precision</td><td>the EWMA rate; IEEE double, so it round-trips
 * bit for bit</td></tr>
 * <tr><td>{@code samples}, {@code version}</td><td>bigint</td><td>sample count; version (bumped only on a
 * transition; a key's life starts at the database clock in microseconds, see below)</td></tr>
 * <tr><td>{@code sliding_window}</td><td>text, nullable</td><td>the sliding window
 * ({@link dev.redeye.api.SlidingWindow#encode()}, canonical: {@code c<N>.<position>.<slots>} or
 * {@code t<N>.<position>.<buckets>}); NULL when the state has none</td></tr>
 * <tr><td>{@code mode}</td><td>smallint, default 0</td><td>the stored mode's
 * {@link dev.redeye.api.BreakerMode#code()}: 0 {@code DEFAULT} (the policy's mode applies), 1 {@code NORMAL},
 * 2 {@code METRICS_ONLY}, 3 {@code DISABLED}</td></tr>
 * <tr><td>{@code contributors}</td><td>text, nullable</td><td>the instances' contributions under a quorum
 * ({@link dev.redeye.api.BreakerState#contributors()}) as {@link dev.redeye.api.Contribution#encodeAll} writes
 * them; NULL when the state has none (never empty); a value
 * {@link dev.redeye.api.Contribution#decodeAll} refuses is malformed</td></tr>
 * <tr><td>{@code expires_at}</td><td>timestamptz, nullable</td><td>clean-up ttl by the database clock: the
 * {@code put} ttl or the policy's {@code stateTtl} (capped at ~100 years) from the last write; a state past
 * it reads as absent and {@code purgeExpired()} deletes it (the breaker's timing never depends on it).
 * {@code NULL} never expires, and is what every write of a <b>pinned</b> state
 * ({@link dev.redeye.api.BreakerState#pinned()}: forced, or with a mode other than {@code DEFAULT}) stores
 * ({@code put} ignores its ttl, and so do atomic operations whose resulting state is pinned: force OPEN, a forced
 * mode, failures counted while forced, outcomes counted under a stored mode), because an operator's decision must
 * not lapse when a ttl passes: while forced every call is rejected and nothing refreshes a ttl, so an expiring
 * row would silently close a breaker an operator holds open until reset, and an expiring mode would silently
 * return the breaker to the policy's. The first write that unpins the state (reset, force CLOSED or HALF_OPEN
 * under a {@code NORMAL} policy, a forced {@code DEFAULT} mode) stores the ttl again. A row with {@code forced} set
 * or a {@code mode} other than 0 is never treated as expired nor purged, even with an {@code expires_at}
 * (written by an earlier version).</td></tr>
 * <tr><td>{@code updated_at}</td><td>timestamptz</td><td>last write, for operators</td></tr>
 * </table>
 *
 * <table>
 * <caption>{@code <table>_claims}: live half-open trial claims</caption>
 * <tr><th>column</th><th>type</th><th>meaning</th></tr>
 * <tr><td>{@code key_hash}</td><td>bytea, references {@code <table>} on delete cascade</td><td>the key</td></tr>
 * <tr><td>{@code token}</td><td>text</td><td>a random UUID, unique per claim; primary key with
 * {@code key_hash}</td></tr>
 * <tr><td>{@code created_at}</td><td>timestamptz</td><td>{@code clock_timestamp()} at claim time</td></tr>
 * <tr><td>{@code ttl_ms}</td><td>bigint</td><td>the ttl the claim was made with, in milliseconds</td></tr>
 * <tr><td>{@code expires_at}</td><td>timestamptz</td><td>{@code created_at + ttl_ms}, exactly; a claim counts
 * until the earlier of the two (database clock), so none outlives its ttl; a live claim whose columns no store
 * writes ({@code 'infinity'}, an expiry beyond its ttl, a ttl out of range, a creation time in the future) makes
 * {@code claimTrial} on its key a {@code StoreException}</td></tr>
 * </table>
 *
 * <table>
 * <caption>{@code <table>_events}: every transition's event, written in its transaction</caption>
 * <tr><th>column</th><th>type</th><th>meaning</th></tr>
 * <tr><td>{@code id}</td><td>bigserial, primary key</td><td>the order polled feeds read in; referenced by a
 * NOTIFY payload {@code ref:<id>} for lines too long to travel in it</td></tr>
 * <tr><td>{@code created_at}</td><td>timestamptz</td><td>rows older than ten minutes are purged</td></tr>
 * <tr><td>{@code line}</td><td>text</td><td>the event as {@code StateCodec.eventToLine}</td></tr>
 * </table>
 *
 * <p>Clean-up indexes, so that the store's clean-up thread finds what to delete without scanning a table:
 * {@code <table>_exp_at} on {@code <table> (expires_at) WHERE NOT forced}, {@code <table>_cl_exp} on
 * {@code <table>_claims (expires_at)} and {@code <table>_ev_age} on {@code <table>_events (created_at)} (their
 * suffixes are no longer than {@code _claims}, so every name fits in an identifier). A store creates missing
 * ones on start, also on tables an older version created.
 *
 * <h2 id="upgrade">Upgrade order: sliding windows and modes</h2>
 * A store of this version adds {@code sliding_window} and {@code mode} to a state table an earlier release made
 * (with {@code createSchema} on; catalog only, no rewrite). A state with neither a window nor a stored mode is
 * still written in layout 1, exactly as the earlier release wrote it, so both releases share such rows during a
 * rolling upgrade. A state with a window or a mode is written in layout 2. The releases before sliding windows
 * ignore columns they do not know, so they cannot be made to keep a window or a mode; instead they refuse any
 * layout but 0 and 1 (their documented rule: an unknown layout is malformed, a {@code StoreException} on every
 * call on the key, never read as absent, never written over, never purged), so they never read such a state
 * without its window and mode and write it back without them. Their calls on those keys fail (handled by the
 * breaker's store-error policy) until they are upgraded. <b>Upgrade every instance that shares the tables before
 * any of them uses a sliding-window policy, a policy mode other than {@code NORMAL} or a forced mode.</b>
 *
 * <h2 id="upgrade-quorum">Upgrade order: quorum opening</h2>
 * A store of this version adds {@code contributors} (nullable text) to a state table an earlier release made (with
 * {@code createSchema} on; catalog only, no rewrite). A state without contributions is still written in layout 1
 * or 2 with {@code contributors} NULL, exactly as the release before quorums wrote it, so both releases share such
 * rows during a rolling upgrade. A state with contributions is written in layout 3. The release before quorums
 * refuses any layout but 0, 1 and 2 (malformed: a {@code StoreException} on every call on the key, never read as
 * absent, never written over, never purged), so it never reads such a state without its contributions and writes
 * it back without them. <b>Upgrade every instance that shares the tables before any of them uses a quorum.</b>
 *
 * <h2>Contract v2</h2>
 * <ul>
 * <li><b>Trial fencing</b>: a trial outcome applies only while the locked state is open, not forced and still
 * at the version the trial was admitted under ({@link dev.redeye.spi.Transitions#isCurrentTrialPeriod});
 * otherwise it returns the current state and writes nothing.</li>
 * <li><b>Quiet clears</b>: a success clearing sub-threshold failures updates the row with the same version and
 * sends no notification.</li>
 * <li><b>Version bases</b>: when an atomic operation finds no live state (no row, a lock row, an expired row),
 * the key's new life starts at {@code clock_timestamp()} in microseconds
 * ({@code floor(extract(epoch FROM clock_timestamp()) * 1000000)}, read in the same {@code SELECT ... FOR
 * UPDATE} that locks the row), and above the version an expired row still holds (its version + 1 when the
 * clock is behind it), so versions never go backwards across {@code delete} or expiry and a new life never
 * starts at the version it replaces.</li>
 * <li><b>Ttl refresh</b>: every atomic write that writes stores {@code expires_at} = now + {@code stateTtl}
 * (NULL for a pinned state).</li>
 * <li><b>Event order</b>: the {@code pg_notify} is sent in the writing transaction under the row lock, and
 * PostgreSQL delivers notifications in commit order, so each operation's events reach subscribers in
 * version order.</li>
 * </ul>
 *
 * <h2>Plain JDBC on the hot path, Jdbi as a connection source</h2>
 * Every statement the store runs is one of a dozen fixed texts ({@code StateSql}), executed as plain JDBC
 * prepared statements. The hot path is where the time goes: an atomic call is a row-locked transaction whose
 * lock every other instance queues on during an incident, and the breaker's healthy read is one primary-key
 * {@code SELECT}. Through Jdbi each call also paid for opening a handle, a statement context, binding through
 * argument factories and mapping through a row mapper (issue 13 measured the healthy read at 2.6x a plain
 * {@code SELECT 1}, most of it per-call Jdbi work, and {@code recordFailure} at 1.5-1.7x a plain-JDBC
 * {@code SELECT ... FOR UPDATE; UPDATE; COMMIT}); and its one-statement-per-call style could not send a
 * transaction's {@code UPDATE}, {@code pg_notify} and {@code COMMIT} as one batch. With plain JDBC an atomic call
 * is two round trips and holds the row lock for one of them (three and two before; {@code RoundTripsTest} counts
 * them), and none of Jdbi's features was used by these fixed statements. Jdbi keeps its place where it earns
 * it: {@link dev.redeye.store.postgres.PostgresStore#builder(org.jdbi.v3.core.Jdbi)} lets an application that
 * configures its connections through Jdbi hand the store that, and the store then borrows each call's
 * connection through {@code jdbi.open()} (a handle of its own, never the caller's transaction).
 *
 * <h2>Commit durability</h2>
 * A call holds the key's row lock until its {@code COMMIT} returns. An atomic write that is not a transition
 * (a count below the threshold, a quiet clear, an error-rate sample) commits with
 * {@code SET LOCAL synchronous_commit = off}, so it does not hold the lock through a WAL flush: during an
 * incident the fleet's failures queue on one row, and a flush per count made the opening commit late while
 * calls kept reaching the dead dependency ({@code redeye simulate --compare} on PostgreSQL: 17 calls already in
 * flight at the opening against 4 on the in-memory store, issue 13). Transitions, claims, {@code put} and
 * {@code delete} keep the session's setting: a lost transition could hand a new open period the version of a lost
 * one, which trial fencing relies on never happening. A database crash can lose the last counts (a few hundred
 * milliseconds of them), never a transition; a transition's flush makes every earlier count durable.
 * {@link dev.redeye.store.postgres.PostgresStore.Builder#synchronousCounts(boolean)} turns this off.
 *
 * <h2>Why HikariCP</h2>
 * The module's dependencies are {@code redeye-api}, {@code jdbi3-core} and the PostgreSQL driver, as the
 * design's module table lists, plus HikariCP, used by {@link dev.redeye.store.postgres.PostgresStoreProvider}
 * only: a store opened from a URI owns a small HikariCP pool (closed with the store). Without one, an
 * unpooled provider opened a new PostgreSQL connection (TCP, authentication, backend start) for every call,
 * which made the engine-over-store rule R2.7 take about 30 s and the whole TCK about 70 s, and would cost
 * every production call a connection set-up. A store built with
 * {@link dev.redeye.store.postgres.PostgresStore#builder(javax.sql.DataSource)} or
 * {@link dev.redeye.store.postgres.PostgresStore#builder(org.jdbi.v3.core.Jdbi)} uses the caller's own
 * {@code DataSource} and bypasses HikariCP entirely (an application may then exclude it). The URI store's pool
 * ({@code StorePool}) adds one thing HikariCP lacks: while it holds no connection at all (after an outage), a
 * call opens one of its own instead of waiting for HikariCP's connection creator, which backs off for up to
 * five seconds after failures however soon the server is back.
 *
 * <h2>Bounds</h2>
 * A breaker call waits at most 1.2 x {@code lockTimeout} (default 1 s) in all for locks other sessions hold,
 * however many waits it needs ({@code LockWaits}: each lock-waiting statement gets what is left of the call's
 * budget, and a row found held is only probed until it is free). Every call bounds its wait on the server:
 * {@code lock_timeout} (default 1 s), {@code statement_timeout}
 * (1.5 s) and {@code idle_in_transaction_session_timeout} (2 s), set per transaction with
 * {@code set_config(..., true)} in the round trip of its first statement, or per session by the store's own pool
 * (see {@link dev.redeye.store.postgres.PostgresStore.Builder#timeoutsPerTransaction(boolean)}); a store opened
 * from a URI also bounds the client side (the driver's {@code socketTimeout} and {@code connectTimeout}, 2 s;
 * the pool's wait, 1 s). The module README lists what each bounds and what a call can wait in all.
 *
 * <h2>Transition feed</h2>
 * Every transition writes its event to the events table and sends it on the NOTIFY channel, so that the two kinds
 * of feed can share a table: a {@code LISTEN} feed (the default) and a polled one
 * ({@link dev.redeye.store.postgres.PostgresStore.Builder#pollFeed(java.time.Duration)}, URI {@code feed=poll}),
 * which reads the table in id order and works behind PgBouncer in transaction mode.
 * Channel {@code redeye:<schema>.<table>} (or {@code redeye:} and a hash when that exceeds 63 bytes). The
 * payload is the event line of {@link dev.redeye.spi.support.StateCodec#eventToLine} (percent-encoded, so any
 * operation name travels exactly) when it has at most 4,000 characters, and {@code ref:<id>} of an events
 * row otherwise, well under PostgreSQL's 8,000-byte NOTIFY limit.
 *
 * <h2>Operation names</h2>
 * Any Java string round-trips, except that PostgreSQL text cannot hold U+0000 or an unpaired UTF-16
 * surrogate: such a name is refused with {@link java.lang.IllegalArgumentException}.
 */
package dev.redeye.store.postgres;
