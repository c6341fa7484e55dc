/**
 * The DynamoDB store of redeye: {@link dev.redeye.store.dynamodb.DynamoDbStore} (built over your
 * {@code DynamoDbClient}) and {@link dev.redeye.store.dynamodb.DynamoDbStoreProvider} for
 * {@code dynamodb://TABLE?region=...} URIs.
 *
 * <h2>Stored layout (layouts 1, 2 and 3)</h2>
 * One table whose only key is the partition key {@code pk} (S). One item per operation name:
 * <ul>
 * <li>{@code pk}: {@code o#<name>}, or {@code h#<base64url(sha256(name))>} when that would exceed DynamoDB's
 * 2,048-byte partition key limit;</li>
 * <li>{@code op} (S) the name, whole, checked on every read; {@code lay} (N) the layout: 3 when the state holds
 * contributions, else 2 when it holds a window or a mode, else 1 (a reader that knows only the earlier layouts
 * refuses a later one rather than drop what it does not know);</li>
 * <li>{@code st} (M of S) the state, with the field names and encodings of {@link dev.redeye.spi.support.StateCodec};
 * absent when the key has no state. Of its fields, {@code window} (S, {@link dev.redeye.api.SlidingWindow#encode()})
 * is absent when the state has no window and {@code mode} (S, the decimal
 * {@link dev.redeye.api.BreakerMode#code()}) is absent for {@link dev.redeye.api.BreakerMode#DEFAULT}; either
 * makes the item layout 2. {@code contributors} (S, {@link dev.redeye.api.Contribution#encodeAll}) holds a
 * quorum's contributions ({@link dev.redeye.api.BreakerState#contributors()}) and is absent when there are none;
 * it makes the item layout 3, whatever its window and mode;</li>
 * <li>{@code v} (N) the version of the state, kept after a delete (tombstone);</li>
 * <li>{@code exp} (N) epoch ms from which a state that is not {@linkplain dev.redeye.api.BreakerState#pinned()
 * pinned} reads as absent (never on a pinned state: forced, or holding an operator's mode);</li>
 * <li>{@code wc} (N) the write counter, the compare-and-set token of every state write;</li>
 * <li>{@code lw} (M of M) per store instance, {@code x} (N) the epoch ms until which its entry stays and
 * {@code c} (NS) the ids of its atomic calls that wrote the state and were still running: a call whose answer
 * was lost recognizes its own write;</li>
 * <li>{@code cl} (M of N) trial claims, token to expiry in epoch ms;</li>
 * <li>{@code gc} (N) epoch seconds for DynamoDB TTL: garbage collection only, a retention after the state's
 * expiry (absent on a pinned state).</li>
 * </ul>
 * {@code feedShards} feed items (16 by default), {@code pk = f#s0} to {@code f#s15}: {@code seq} (N) the shard's last
 * event's sequence number, {@code ev} (L of M) its last events ({@code s} sequence, {@code e} the event line of
 * {@link dev.redeye.spi.support.StateCodec#eventToLine}, with the state's {@code window}, {@code mode} and
 * {@code contributors} fields when it has them), {@code lost} (N) events writers could not append to it, {@code of} (N) the shard count of
 * its last writer. An operation's events go to the shard of its name's hash. The single feed head of earlier
 * releases, {@code pk = f#head} (the same attributes but {@code of}, and {@code mv} (N), the notices this
 * release's writers add to its {@code lost}), is kept working during a rolling upgrade with
 * {@code legacyFeedHead}.
 *
 * <h2>Upgrade order</h2>
 * An item without a window, a mode or contributions is written as the first release wrote it, and every
 * earlier layout is still read. The releases before quorum opening read layouts 1 and 2 only and refuse a
 * layout-3 item (a {@link dev.redeye.api.StoreException} on every call on the key) instead of reading it without
 * its contributions and writing it back without them: upgrade every instance that shares a table before any of
 * them uses a quorum ({@link dev.redeye.api.Policy#quorumOn()}), as before any uses a sliding window or stores a
 * mode (layout 2). A {@code contributors} field that {@link dev.redeye.api.Contribution#decodeAll} refuses, an
 * empty one, one in a layout-1 or layout-2 item, and a layout-3 item without one are malformed items, refused
 * with a {@link dev.redeye.api.StoreException} naming the key and left as they are.
 *
 * <p>Operation names are attribute values and expression attribute names only, never part of an expression's
 * text, so any string round-trips, except that a name must be well-formed UTF-16 (DynamoDB strings are UTF-8)
 * and at most 32 KiB in UTF-8 (an item holds at most 400 KB); others are refused with
 * {@link java.lang.IllegalArgumentException}.
 */
package dev.redeye.store.dynamodb;
