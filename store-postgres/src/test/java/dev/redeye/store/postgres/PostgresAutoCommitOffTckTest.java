package dev.redeye.store.postgres;

import dev.redeye.spi.Store;
import java.time.Duration;

/**
 * The full TCK over stores built on HikariCP pools whose connections default to {@code autoCommit=false} (a
 * common Spring set-up; HikariCP rolls back what a borrower left uncommitted), one pool per client, closed with
 * its store. Same schema handling and hooks as {@link PostgresStoreTckTest}, which runs the TCK over URI stores.
 */
class PostgresAutoCommitOffTckTest extends PostgresStoreTckTest {
    @Override
    protected Store newClient() {
        var pool = PgTestSupport.autoCommitOffPool(8);
        try {
            return PostgresStore.builder(pool).schema(schema()).table("breakers")
                    .lockTimeout(Duration.ofSeconds(10)).statementTimeout(Duration.ofSeconds(15))
                    .closeWithStore(pool).build();
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
    }
}
