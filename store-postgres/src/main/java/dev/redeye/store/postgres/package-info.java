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
 * transition)</td></tr>
 * <tr><td>{@code expires_at}</td><td>timestamptz</td><td>clean-up ttl by the database clock; a state past
 * it reads as absent (the breaker's timing never depends on it)</td></tr>
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
