package dev.redeye.tck;

import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The claim table of one key as read back through the {@link TrialClaims} SPI at the end of an R8.5 scenario,
 * which has no call that lists claims: the live claims are counted (a claim of {@code p} permits succeeds
 * exactly when fewer than {@code p} are live; the probe's own claim is released at once), then every token
 * issued for the key is released in turn and the claims are counted again, so the count falling by one
 * names a token that was live. Reading the table empties it. Immutable.
 *
 * @param live        the issued tokens that held a claim, in the order they were issued
 * @param unaccounted how many claims still held the key after every issued token was released (0 in a correct
 *                    store; {@value #MOST} stands for "at least that many")
 * @param anomaly     what the read-back saw that no claim table explains (a release that freed more than one
 *                    permit), or {@code null}
 */
record ClaimTable(List<String> live, int unaccounted, String anomaly) {
    /** The most claims a count tells apart. */
    static final int MOST = 8;
    /** The ttl of the probe's own claims (released at once). */
    private static final Duration PROBE_TTL = Duration.ofMinutes(5);

    ClaimTable {
        live = List.copyOf(live);
    }

    /** Reads the claim table of {@code key} by claims and releases, releasing each of {@code issued}. */
    static ClaimTable read(TrialClaims claims, String key, List<String> issued) {
        int count = count(claims, key);
        List<String> live = new ArrayList<>();
        String anomaly = null;
        for (String t : issued) {
            claims.releaseTrial(key, t);
            int after = count(claims, key);
            if (after == count - 1) {
                live.add(t);
            } else if (after != count && anomaly == null) {
                anomaly = "releasing the token " + t + " changed the count of live claims from " + count + " to "
                        + after;
            }
            count = after;
        }
        return new ClaimTable(live, count, anomaly);
    }

    /** The number of live claims of {@code key} (at most {@link #MOST}), leaving them as they are. */
    private static int count(TrialClaims claims, String key) {
        for (int permits = 1; permits <= MOST; permits++) {
            Optional<String> t = claims.claimTrial(key, permits, PROBE_TTL);
            if (t.isPresent()) {
                claims.releaseTrial(key, t.get());
                return permits - 1;
            }
        }
        return MOST;
    }

    @Override
    public String toString() {
        return "live claims " + live + (unaccounted == 0 ? "" : ", " + (unaccounted >= MOST ? "at least " : "")
                + unaccounted + " more claim(s) no issued token releases") + (anomaly == null ? "" : "; " + anomaly);
    }
}
