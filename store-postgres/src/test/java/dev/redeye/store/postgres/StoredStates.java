package dev.redeye.store.postgres;

import dev.redeye.api.BreakerState;
import java.time.Duration;

/** The states, and their time to live, that the PostgreSQL store tests write and read back. */
final class StoredStates {
    /** A time to live longer than any test. */
    static final Duration TTL = Duration.ofHours(1);

    /** A state with most fields away from their initial values, so that a round trip shows each one. */
    static final BreakerState RICH = new BreakerState(3, 1_234_567L, true, 2_345_678L, 2,
            0.1 + 0.2, 17L, 1, false, 9L);

    private StoredStates() {
    }
}
