-- The tables as the previous release of the store created them (its schema.sql, unchanged below this
-- header): the claims table without created_at and ttl_ms. PostgresSchemaUpgradeTest starts stores over it.
--
-- redeye PostgreSQL store: the tables one PostgresStore uses (layout 1).
--
-- PostgresStore runs this script itself on start (unless createTables(false)), with ${schema} and
-- ${table} replaced by its validated schema and table names. Teams that run migrations can run it
-- through Flyway or Liquibase (both understand ${...} placeholders) or replace the placeholders by
-- hand, for example: sed -e 's/${schema}/public/g' -e 's/${table}/redeye_breakers/g' schema.sql | psql
-- PostgresStore.schemaSql(schema, table) returns the script with the names filled in.
--
-- Defaults: schema public, table redeye_breakers.

CREATE SCHEMA IF NOT EXISTS "${schema}";

-- One row per operation name: the BreakerState fields, one typed column each.
-- key_hash = sha256(convert_to(key, 'UTF8')) identifies the row (a 10 KB name cannot be a btree key).
-- layout 0 is the store's placeholder: a row without state (every state column at its default) that holds
-- trial claims or a row lock; 1 is the current layout; anything else, or a layout-0 row carrying state,
-- is a row this version cannot read, reported as malformed. A state whose expires_at has passed reads as
-- absent, except a forced state: expires_at NULL never expires, and every write of a forced state (held
-- open by an operator until reset) stores NULL; a row with forced = true never reads as expired.
CREATE TABLE IF NOT EXISTS "${schema}"."${table}" (
    key_hash        bytea            PRIMARY KEY,
    key             text             NOT NULL,
    layout          smallint         NOT NULL,
    failures        integer          NOT NULL DEFAULT 0,
    last_failure_at bigint           NOT NULL DEFAULT 0,
    open            boolean          NOT NULL DEFAULT false,
    opened_at       bigint           NOT NULL DEFAULT 0,
    open_count      integer          NOT NULL DEFAULT 0,
    error_rate      double precision NOT NULL DEFAULT 0,
    samples         bigint           NOT NULL DEFAULT 0,
    trial_successes integer          NOT NULL DEFAULT 0,
    forced          boolean          NOT NULL DEFAULT false,
    version         bigint           NOT NULL DEFAULT 0,
    expires_at      timestamptz,
    updated_at      timestamptz      NOT NULL DEFAULT clock_timestamp()
);

-- Half-open trial claims: at most `permits` live rows per key, counted under the row lock of the key's
-- row above. Expiry is judged by the database clock.
CREATE TABLE IF NOT EXISTS "${schema}"."${table}_claims" (
    key_hash   bytea       NOT NULL REFERENCES "${schema}"."${table}" (key_hash) ON DELETE CASCADE,
    token      text        NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (key_hash, token)
);

-- Transition events too large for a NOTIFY payload (very long operation names): the payload then carries
-- "ref:<id>" and listeners read the event line from here. Rows older than ten minutes are pruned.
CREATE TABLE IF NOT EXISTS "${schema}"."${table}_events" (
    id         bigserial   PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    line       text        NOT NULL
);

-- Clean-up indexes (the store's clean-up thread, PostgresStore.purgeExpired): expired states and placeholder
-- rows, expired claims, old events, each found through an index instead of a scan of its table. Forced
-- states never expire, so they are left out of the first one. The suffixes are at most 7 characters, like
-- "_claims", so the names fit in an identifier for every table name the store accepts.
CREATE INDEX IF NOT EXISTS "${table}_exp_at" ON "${schema}"."${table}" (expires_at) WHERE NOT forced;
CREATE INDEX IF NOT EXISTS "${table}_cl_exp" ON "${schema}"."${table}_claims" (expires_at);
CREATE INDEX IF NOT EXISTS "${table}_ev_age" ON "${schema}"."${table}_events" (created_at);
