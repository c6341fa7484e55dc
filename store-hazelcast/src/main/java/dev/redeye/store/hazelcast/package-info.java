/**
 * The Hazelcast store of redeye: {@link dev.redeye.store.hazelcast.HazelcastStore} over a member or a client,
 * {@link dev.redeye.store.hazelcast.HazelcastStoreProvider} for {@code hazelcast://} URIs, and
 * {@link dev.redeye.store.hazelcast.RedeyeSerializableFactory}, which members register for native mode.
 *
 * <h2>Stored layout (formats 2, 3 and 4)</h2>
 * One map, one entry per operation, keyed by the operation name exactly as the user wrote it (any well-formed
 * UTF-16 string: no prefix, escaping or hashing is needed, the map belongs to redeye). Every value is one
 * {@code String} holding all the operation has (its state, the state's expiry, its trial claims), so that every
 * store call changes it in one atomic write and a member needs no redeye class to store, compare or filter it.
 * <table>
 * <caption>Values</caption>
 * <tr><th>value</th><th>meaning</th></tr>
 * <tr><td>{@code redeye-state/2 failures=0&lastFailureAt=0&open=0&openedAt=0&openCount=0&errorRate=0.0&samples=0&trialSuccesses=0&forced=0&version=5&expiresAt=1764500000123}</td>
 * <td>a state: {@link dev.redeye.spi.support.StateCodec}'s field names and encodings (errorRate as
 * {@code Double.toString}, bit-exact; times in epoch ms). {@code expiresAt} (epoch ms): from then on the state
 * reads as absent; {@code Policy.stateTtl} after every atomic write (R1.11), the given ttl after
 * {@code put}; absent while the state is pinned: {@code forced=1} (R1.9, R5.7) or a stored {@code mode}. A
 * value written by a transition starts with {@code kind=<wire name>&from=<status code>&} (what the feed
 * delivers); any other write has no {@code kind}.</td></tr>
 * <tr><td>{@code redeye-state/3 ...&forced=0&window=c5.7.20011&mode=2&version=9...}</td><td>the same, for a
 * state whose fields include a sliding {@code window} or a stored {@code mode} (either or both): a reader of
 * format 2 only refuses it, naming the format, rather than drop them; every other state is written in format
 * 2</td></tr>
 * <tr><td>{@code redeye-state/4 ...&forced=0&contributors=pod-b,1,1,1764500000456;pod-a,2,2,1764500000123&version=9...}</td>
 * <td>the same, for a state with a quorum's contributions ({@code BreakerState.contributors()}, as
 * {@link dev.redeye.api.Contribution#encodeAll} writes them), with or without a window and a mode: a reader of
 * formats 2 and 3 only (the release before quorums) refuses it, naming the format, rather than drop them; a state
 * without contributions is written in format 2 or 3</td></tr>
 * <tr><td>{@code ...&claim.<token>=<expiresAt>}</td><td>a live trial claim (a random UUID and its expiry in
 * epoch ms: the cluster clock in native mode, the client's clock in CAS mode), after a state's or a tombstone's
 * fields</td></tr>
 * <tr><td>{@code redeye-tombstone/2 version=17&expiresAt=1764586400000}</td><td>after {@code delete}: the
 * deleted state's last version, read as absent, kept for the tombstone ttl; {@code delete} removes the claims in
 * the same write</td></tr>
 * <tr><td>{@code redeye-tombstone/2 claim.<token>=<expiresAt>}</td><td>the claims of an operation without a
 * state; the entry is removed when its last claim is released</td></tr>
 * </table>
 * The number after the slash is the format version: a value in a version this code does not read is refused with a
 * {@link dev.redeye.api.StoreException} naming it, never guessed at (format 1 kept the claims in a second map,
 * {@code <map>.claims}). A value that is not one of these ({@code get} of a key someone else wrote) is a
 * {@code StoreException} too, and is never reset silently ({@code put} and {@code delete} overwrite it).
 *
 * <h2>Expiry</h2>
 * What reads as expired is decided by the value, never by Hazelcast's entry ttl: in CAS mode no conditional
 * write can set a ttl in the same step, and a ttl set in a second step could land on another client's newer,
 * pinned state (forced, or a stored mode: {@code BreakerState.pinned()}), which must never expire. Hazelcast's
 * entry ttl only collects garbage: set by every native write to cover the value (none while a pinned state is
 * stored), and in CAS mode only when an entry is created.
 *
 * <h2>Versions across a key's lives</h2>
 * When an atomic operation finds the state absent or expired it starts from {@code BreakerState.initial(base)}
 * with {@code base = max(clock in microseconds, last version + 1)}, the last version being the expired state's
 * or the tombstone's, the clock the cluster clock on the member in native mode, the client's clock in CAS mode.
 * Once an entry is collected (after its state expired, hours), a clock in microseconds is far above every version
 * of the life that ended (a life would need more than one transition per microsecond to catch up), whatever the
 * skew between clocks (milliseconds); a {@code delete} can be followed at once by a new life, possibly on a
 * client whose clock is behind or after a {@code put} of a high version, which the tombstone covers.
 *
 * <h2>Entry processors (native mode)</h2>
 * {@code StateProcessor}, {@code PutProcessor}, {@code ClaimProcessor}, {@code DeleteProcessor},
 * {@code ProbeProcessor} and the backup write are {@code IdentifiedDataSerializable} of
 * {@link dev.redeye.store.hazelcast.RedeyeSerializableFactory}, with explicit fields after a wire version (no
 * class names on the wire, no reflection, no Java serialization). A member needs {@code redeye-store-hazelcast}
 * and {@code redeye-api} on its class path and the factory registered; one that lacks any of them is detected and
 * the store runs in CAS mode instead.
 *
 * <p>The wire version is 5: a state processor carries the whole policy ({@code quorum} and {@code quorumFraction}
 * included), the operation's instance and a batch's outcomes ({@link dev.redeye.spi.OutcomeBatches}), a put
 * processor the state's contributions. A member of another wire version refuses every processor, and a client
 * whose probe finds such a member runs CAS mode, so in a rolling upgrade the <b>members go first</b>; a batch
 * stores the value its outcomes one by one would, in the formats above; and since a redeye that reads formats 2
 * and 3 only refuses format-4 values, every client is upgraded before any breaker uses a quorum.
 */
package dev.redeye.store.hazelcast;
