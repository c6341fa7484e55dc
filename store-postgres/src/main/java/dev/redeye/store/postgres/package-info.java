/**
 * The PostgreSQL store of redeye: {@link dev.redeye.store.postgres.PostgresStore} (over your own
 * {@code DataSource} or {@code Jdbi}) and {@link dev.redeye.store.postgres.PostgresStoreProvider} (for
 * {@code postgresql://} and {@code jdbc:postgresql://} URIs).
 *
 * <h2>Stored layout (layout 1)</h2>
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
 * <tr><td>{@code layout}</td><td>smallint</td><td>1 for a state written by this version; 0 for a lock row
 * without state (created to hold trial claims, reads as absent); any other value is malformed</td></tr>
 * <tr><td>{@code failures}, {@code open_count}, {@code trial_successes}</td><td>integer</td>
 * <td>the {@code BreakerState} counters</td></tr>
 * <tr><td>{@code last_failure_at}, {@code opened_at}</td><td>bigint</td><td>epoch ms (virtual time passed
 * in by the caller)</td></tr>
 * <tr><td>{@code open}, {@code forced}</td><td>boolean</td><td>the flags</td></tr>
 * <tr><td>{@code error_rate}</td><td>double precision</td><td>the EWMA rate; IEEE double, so it round-trips
 * bit for bit</td></tr>
 * <tr><td>{@code samples}, {@code version}</td><td>bigint</td><td>sample count; version (bumped only on a
 * transition; a key's life starts at the database clock in microseconds, see below)</td></tr>
 * <tr><td>{@code expires_at}</td><td>timestamptz, nullable</td><td>clean-up ttl by the database clock: the
 * {@code put} ttl or the policy's {@code stateTtl} (capped at ~100 years) from the last write; a state past
 * it reads as absent and {@code purgeExpired()} deletes it (the breaker's timing never depends on it).
 * {@code NULL} never expires, and is what every write of a <b>forced</b> state stores ({@code put} ignores its
 * ttl, and so do atomic operations whose resulting state is forced: force OPEN and failures counted while
 * forced), because while forced every call is rejected and nothing refreshes a ttl, so an expiring row
 * would silently close a breaker an operator holds open until reset. The first write that leaves the state
 * unforced (reset, force CLOSED or HALF_OPEN) stores the ttl again. A row with {@code forced} set is never
 * treated as expired nor purged, even with an {@code expires_at} (written by an earlier version).</td></tr>
 * <tr><td>{@code updated_at}</td><td>timestamptz</td><td>last write, for operators</td></tr>
 * </table>
 *
 * <table>
 * <caption>{@code <table>_claims}: live half-open trial claims</caption>
 * <tr><th>column</th><th>type</th><th>meaning</th></tr>
 * <tr><td>{@code key_hash}</td><td>bytea, references {@code <table>} on delete cascade</td><td>the key</td></tr>
 * <tr><td>{@code token}</td><td>text</td><td>a random UUID, unique per claim; primary key with
 * {@code key_hash}</td></tr>
 * <tr><td>{@code expires_at}</td><td>timestamptz</td><td>{@code clock_timestamp() + ttl} at claim time;
 * compared with the database clock</td></tr>
 * </table>
 *
 * <table>
 * <caption>{@code <table>_events}: transition events too large for a NOTIFY payload</caption>
 * <tr><th>column</th><th>type</th><th>meaning</th></tr>
 * <tr><td>{@code id}</td><td>bigserial</td><td>referenced by the payload {@code ref:<id>}</td></tr>
 * <tr><td>{@code created_at}</td><td>timestamptz</td><td>rows older than ten minutes are pruned</td></tr>
 * <tr><td>{@code line}</td><td>text</td><td>the event as {@code StateCodec.eventToLine}</td></tr>
 * </table>
 *
 * <h2>Contract v2</h2>
 * <ul>
 * <li><b>Trial fencing</b>: a trial outcome applies only while the locked state is open, not forced and still
 * at the version the trial was admitted under ({@link dev.redeye.api.Transitions#isCurrentTrialPeriod});
 * otherwise it returns the current state and writes nothing.</li>
 * <li><b>Quiet clears</b>: a success clearing sub-threshold failures updates the row with the same version and
 * sends no notification.</li>
 * <li><b>Version bases</b>: when an atomic operation finds no live state (no row, a lock row, an expired row),
 * the key's new life starts at {@code clock_timestamp()} in microseconds
 * ({@code floor(extract(epoch FROM clock_timestamp()) * 1000000)}, read in the same {@code SELECT ... FOR
 * UPDATE} that locks the row), and at least at the version an expired row still holds, so versions never go
 * backwards across {@code delete} or expiry.</li>
 * <li><b>Ttl refresh</b>: every atomic write that writes stores {@code expires_at} = now + {@code stateTtl}.</li>
 * <li><b>Event order</b>: the {@code pg_notify} is sent in the writing transaction under the row lock, and
 * PostgreSQL delivers notifications in commit order, so each operation's events reach subscribers in
 * version order.</li>
 * </ul>
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
 * {@code DataSource} and bypasses HikariCP entirely (an application may then exclude it).
 *
 * <h2>Transition feed</h2>
 * Channel {@code redeye:<schema>.<table>} (or {@code redeye:} and a hash when that exceeds 63 bytes). The
 * payload is the event line of {@link dev.redeye.api.StateCodec#eventToLine} (percent-encoded, so any
 * operation name travels exactly) when it has at most 4,000 characters, and {@code ref:<id>} of an events
 * row otherwise, well under PostgreSQL's 8,000-byte NOTIFY limit.
 *
 * <h2>Operation names</h2>
 * Any Java string round-trips, except that PostgreSQL text cannot hold U+0000 or an unpaired UTF-16
 * surrogate: such a name is refused with {@link java.lang.IllegalArgumentException}.
 */
package dev.redeye.store.postgres;
