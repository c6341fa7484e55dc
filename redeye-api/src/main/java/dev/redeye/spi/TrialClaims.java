package dev.redeye.spi;

import dev.redeye.api.StoreException;
import java.time.Duration;
import java.util.Optional;

/**
 * Capability: exclusive half-open trial claims. At most {@code permits} live claims exist per key; each
 * claim has a token unique per call; claims expire after their ttl by the backend's own clock.
 */
public interface TrialClaims {

    /**
     * Creates a claim if fewer than {@code permits} live claims exist for the key.
     *
     * @param permits the maximum number of concurrent live claims (>= 1)
     * @param ttl     how long the claim lives if never released (> 0)
     * @return the new claim's token, or empty if every permit is taken
     * @throws StoreException           if the backend fails
     * @throws IllegalArgumentException if permits < 1 or ttl is not positive
     */
    Optional<String> claimTrial(String key, int permits, Duration ttl);

    /**
     * Releases the claim holding {@code token} (compare-and-delete). A no-op, throwing nothing, for an unknown
     * key, an unknown or expired token, or a token already released; never frees another caller's claim.
     *
     * @throws StoreException if the backend fails
     */
    void releaseTrial(String key, String token);
}
