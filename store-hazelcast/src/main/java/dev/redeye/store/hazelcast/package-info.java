/**
 * The Hazelcast store of redeye: {@link dev.redeye.store.hazelcast.HazelcastStore} over a member or a client,
 * and {@link dev.redeye.store.hazelcast.HazelcastStoreProvider} for {@code hazelcast://} URIs.
 *
 * <h2>Stored layout</h2>
 * Two maps, keyed by the operation name exactly as the user wrote it (any well-formed UTF-16 string: no
 * prefix, escaping or hashing is needed, each map belongs to redeye). Every value is a {@code String}, so that
 * a member needs no redeye class to store, compare or filter it.
 * <table>
 * <caption>Maps and values</caption>
 * <tr><th>map</th><th>value</th><th>expiry (entry ttl)</th></tr>
 * <tr><td>{@code <map>} (default {@code redeye})</td>
 * <td>{@code redeye-state/1 failures=0&lastFailureAt=0&open=0&openedAt=0&openCount=0&errorRate=0.0&samples=0&trialSuccesses=0&forced=0&version=5}:
 * {@link dev.redeye.api.StateCodec}'s field names and encodings (errorRate as {@code Double.toString}, bit-exact;
 * times in epoch ms). A value written by a transition starts with {@code kind=<wire name>&from=<status code>&}
 * (what the feed delivers); any other write has no {@code kind}.</td>
 * <td>{@code Policy.stateTtl} set again on every atomic write (contract v2, R1.11), the given ttl on {@code put};
 * none while {@code forced=1} (R1.9, R5.7)</td></tr>
 * <tr><td>{@code <map>} after {@code delete}</td><td>{@code redeye-tombstone/1 version=17}: the deleted state's
 * last version; read as absent</td><td>{@code tombstoneTtl} (default 1 day)</td></tr>
 * <tr><td>{@code <map>.claims}</td><td>{@code redeye-claims/1 <token>=<expiresAt>&...}: the live trial claims,
 * each a random UUID and its expiry in epoch ms (cluster clock in native mode, the client's clock in CAS
 * mode)</td><td>the latest expiry of its claims (garbage collection only; liveness is each claim's own
 * expiry); kept as it is by a release that leaves claims</td></tr>
 * </table>
 * The number after the slash is the format version: a value in another version is refused with a
 * {@link dev.redeye.api.StoreException} naming it, never guessed at. A value that is not one of these
 * ({@code get} of a key someone else wrote) is a {@code StoreException} too, and is never reset silently.
 *
 * <h2>Versions across a key's lives</h2>
 * When an atomic operation finds the key absent it starts from {@code BreakerState.initial(base)} with
 * {@code base = max(clock in microseconds, tombstone version + 1)}: the cluster clock on the member in native
 * mode, the client's clock in CAS mode. Why both: a key's state expires only after {@code stateTtl} without a
 * write (hours), so a clock in microseconds is far above every version of the life that expired (a life would
 * need more than one transition per microsecond to catch up), whatever the skew between clocks (milliseconds);
 * a {@code delete} can be followed at once by a new life, possibly on a client whose clock is behind or after
 * a {@code put} of a high version, which the tombstone covers.
 *
 * <h2>Entry processors (native mode)</h2>
 * {@code StateProcessor}, {@code ClaimProcessor}, {@code DeleteProcessor}, {@code ProbeProcessor} and the
 * backup write are {@code DataSerializable} with explicit fields after a wire version (no factory to configure
 * on members, no Java serialization). A member needs {@code redeye-store-hazelcast} and {@code redeye-api} on
 * its class path; one that lacks them is detected and the store runs in CAS mode instead.
 */
package dev.redeye.store.hazelcast;
