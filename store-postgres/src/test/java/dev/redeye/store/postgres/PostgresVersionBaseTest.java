package dev.redeye.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The version a key's new life starts at when its row still holds an expired state (TCK rule R1.12): above
 * the expired version, also when that version is ahead of the database clock in microseconds, as a clock
 * stepped back or a fail-over to a server whose clock is behind leaves it. The TCK cannot reach that case
 * through the store's API (every version the store writes starts below its clock), so the row is set up
 * with plain SQL.
 */
class PostgresVersionBaseTest {
    @RegisterExtension
    static final PgSchema SCHEMA = new PgSchema("redeye_pgversion");

    @Test
    void aNewLifeAfterAnExpiredStateAheadOfTheClockStartsAboveIt() throws Exception {
        String table = "t_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        try (PostgresStore s = PostgresStore.open(PgTestSupport.urlWith("schema=" + SCHEMA.name() + "&table="
                + table))) {
            Policy counts = Policy.builder().failureThreshold(100).stateTtl(Duration.ofHours(1)).build();
            s.recordFailure("op", counts, 1_000);
            // An hour ahead of the database clock, and expired.
            long ahead = PgTestSupport.count("SELECT " + StateSql.NOW_MICROS) + 3_600_000_000L;
            PgTestSupport.update("UPDATE " + TableNames.quote(SCHEMA.name()) + "." + TableNames.quote(table)
                    + " SET version = ?, expires_at = clock_timestamp() - interval '1 second'", ahead);
            assertEquals(Optional.empty(), s.get("op"), "the expired state reads as absent");
            StateChange reborn = s.recordFailure("op", counts, 2_000);
            assertTrue(reborn.previous().version() > ahead, "the new life started from " + reborn.previous()
                    + ", not above the expired version " + ahead);
            assertEquals(BreakerState.initial(ahead + 1), reborn.previous());
            assertEquals(ahead + 1, s.get("op").orElseThrow().version(), "the stored version");
        }
    }
}
