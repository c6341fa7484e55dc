package dev.redeye.store.postgres;

import dev.redeye.spi.Store;

/**
 * The full TCK over URI stores whose transition feed polls the events table ({@code feed=poll}, the default
 * interval) instead of LISTEN: the feed rules (R6) hold for the polled feed too, interruptFeed included (it
 * terminates the backend the feed polls on). Same schema handling and hooks as {@link PostgresStoreTckTest}.
 */
class PostgresPollFeedTckTest extends PostgresStoreTckTest {
    @Override
    protected Store newClient() {
        return new PostgresStoreProvider().open(PgTestSupport.urlWith("schema=" + schema() + "&table=breakers"
                + "&feed=poll&lockTimeoutMillis=10000&statementTimeoutMillis=15000"));
    }
}
