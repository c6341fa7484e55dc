package dev.redeye.store.dynamodb;

import dev.redeye.api.OperationNames;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Partition keys of the table. An operation name is always stored whole in the item's {@code op} attribute;
 * its partition key is {@code o#<name>} when that fits DynamoDB's 2,048-byte limit on a partition key, and
 * {@code h#<base64url(sha256(utf8(name)))>} otherwise (the name is then verified against {@code op} on every
 * read). The feed's keys ({@code f#s<i>} for shard {@code i}, and {@code f#head}, the single feed head of
 * earlier releases) can never be the key of an operation, nor can the two forms of operation keys meet.
 */
final class Keys {
    /** DynamoDB's limit on the UTF-8 size of a partition key value. */
    static final int MAX_PARTITION_KEY_BYTES = 2048;
    /**
     * The largest operation name (UTF-8 bytes) this store accepts: the name is stored in its item and, percent
     * encoded, in the feed ring, and a DynamoDB item holds at most 400 KB.
     */
    static final int MAX_NAME_BYTES = 32 * 1024;
    static final String VERBATIM = "o#";
    static final String HASHED = "h#";
    /** The partition key of the single feed head of earlier releases (see {@link Feed}, upgrade). */
    static final String FEED_HEAD = "f#head";
    /** The prefix of a feed shard's partition key: {@code f#s0}, {@code f#s1}, ... */
    static final String FEED_SHARD = "f#s";

    private Keys() {
    }

    /**
     * The partition key of an operation's item.
     *
     * @throws NullPointerException     if {@code name} is null
     * @throws IllegalArgumentException if the name is not well-formed UTF-16 (an unpaired surrogate cannot be
     *                                  stored as a DynamoDB string) or is longer than {@link #MAX_NAME_BYTES}
     */
    static String partitionKey(String name) {
        byte[] utf8 = utf8(name);
        if (VERBATIM.length() + utf8.length <= MAX_PARTITION_KEY_BYTES) {
            return VERBATIM + name;
        }
        return HASHED + Base64.getUrlEncoder().withoutPadding().encodeToString(sha256(utf8));
    }

    /**
     * The UTF-8 bytes of a valid operation name.
     *
     * @throws IllegalArgumentException as for {@link #partitionKey(String)}
     */
    static byte[] utf8(String name) {
        byte[] utf8 = OperationNames.requireWellFormed(name).getBytes(StandardCharsets.UTF_8);
        if (utf8.length > MAX_NAME_BYTES) {
            throw new IllegalArgumentException("operation name is " + utf8.length + " bytes in UTF-8; the DynamoDB "
                    + "store accepts at most " + MAX_NAME_BYTES + " (a DynamoDB item holds at most 400 KB)");
        }
        return utf8;
    }

    /**
     * The feed shard that an operation's events go to: the first four bytes of {@code sha256(utf8(name))}, read
     * as an unsigned big-endian number, modulo {@code shards}. Stable across JVMs and releases, so that every
     * writer of a fleet puts one operation's events in one shard (their order there is their write order).
     *
     * @throws IllegalArgumentException as for {@link #partitionKey(String)}, or if {@code shards < 1}
     */
    static int feedShard(String name, int shards) {
        if (shards < 1) {
            throw new IllegalArgumentException("shards must be at least 1, was " + shards);
        }
        byte[] h = sha256(utf8(name));
        long first = ((h[0] & 0xffL) << 24) | ((h[1] & 0xffL) << 16) | ((h[2] & 0xffL) << 8) | (h[3] & 0xffL);
        return (int) (first % shards);
    }

    /** The partition key of feed shard {@code shard}. */
    static String feedShardKey(int shard) {
        return FEED_SHARD + shard;
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
