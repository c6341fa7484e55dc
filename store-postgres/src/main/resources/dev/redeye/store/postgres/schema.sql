-- redeye PostgreSQL store: the tables one PostgresStore uses (layouts 1, 2 and 3).
--
-- In the jar at dev/redeye/store/postgres/schema.sql. PostgresStore runs it itself on start unless built with
-- createSchema(false) (URI: createSchema=false), with ${schema} and ${table} replaced by its validated schema
-- and table names; with createSchema(false) it only checks that these tables, columns and indexes exist, and
-- fails naming what is missing. Teams that run migrations run this file as one through Flyway or Liquibase
-- (both understand ${...} placeholders: define schema and table) or with the placeholders replaced by hand:
--   sed -e 's/${schema}/public/g' -e 's/${table}/redeye_breakers/g' schema.sql | psql
-- PostgresStore.schemaSql(schema, table) returns it with the names filled in. Every statement is
-- IF NOT EXISTS, and it can run in one transaction.
--
-- Creating the tables creates their indexes with them. An index missing from a table that already holds
-- rows (added by a later version) is built by the store with CREATE INDEX CONCURRENTLY, outside any
-- transaction, so that writes go on meanwhile; from a migration tool, run that statement the same way
-- (Flyway: a migration of its own, which Flyway then runs outside a transaction).
--
-- Upgrading tables an earlier version made: this file never alters a table, it only creates what is missing.
-- A column declared here that a table lacks is added by the store on start (createSchema on) as declared,
-- with ALTER TABLE ... ADD COLUMN IF NOT EXISTS; with createSchema(false) the start fails naming the columns
-- and the exact statements to run as the tables' owner. For tables of the releases whose claims table lacks
-- created_at and ttl_ms (NOT NULL without a DEFAULT), as a migration of its own after this file:
--   BEGIN;
--   SET LOCAL lock_timeout = '1s';
--   LOCK TABLE "${schema}"."${table}_claims" IN ACCESS EXCLUSIVE MODE;
--   DELETE FROM "${schema}"."${table}_claims";
--   ALTER TABLE "${schema}"."${table}_claims" ADD COLUMN IF NOT EXISTS created_at timestamptz NOT NULL,
--       ADD COLUMN IF NOT EXISTS ttl_ms bigint NOT NULL;
--   COMMIT;
-- The DELETE drops live trial claims (they live seconds; one extra trial may run per key at that moment);
-- run it again if it fails on its lock_timeout (waiting longer would hold every call on the table behind it).
-- A column a later version adds to an existing table has a constant DEFAULT (or none, or NOT NULL without
-- one only in the claims table), so that adding it changes the catalog only (PostgreSQL 11 and later). Every
-- column is declared on one line of its own: the store parses each column's definition from its line.
--
-- Defaults: schema public, table redeye_breakers.

CREATE SCHEMA IF NOT EXISTS "${schema}";

-- One row per operation name: the BreakerState fields, one typed column each.
-- key_hash = sha256(convert_to(key, 'UTF8')) identifies the row (a 10 KB name cannot be a btree key).
-- layout 0 is the store's placeholder: a row without state (every state column at its default) that holds
-- trial claims or a row lock; 1 is a state without a sliding window and without a stored mode
-- (sliding_window NULL, mode 0), which the releases before sliding windows read as well; 2 is a state with a
-- sliding window or a stored mode, which those releases refuse (they know layouts 0 and 1 only) instead of
-- reading it without them and writing it back; 3 is a state with a quorum's contributions (with or without a
-- window or a mode), which the releases before quorums refuse (they know layouts 0, 1 and 2 only); anything
-- else, a layout-0 row carrying state, or a layout that does not match the row's window, mode and contributions,
-- is a row this version cannot read, reported as malformed.
-- sliding_window holds SlidingWindow.encode(); mode holds BreakerMode.code() (0: DEFAULT, the policy's);
-- contributors holds Contribution.encodeAll() of the state's contributions, NULL for none (never empty).
-- A state whose expires_at has passed reads as absent, except a pinned state (forced, or a mode other than
-- 0): expires_at NULL never expires, and every write of a pinned state (an operator's decision, held until
-- changed) stores NULL; a row with forced = true or mode <> 0 never reads as expired.
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
    updated_at      timestamptz      NOT NULL DEFAULT clock_timestamp(),
    sliding_window  text,
    mode            smallint         NOT NULL DEFAULT 0,
    contributors    text
);

-- Half-open trial claims: at most `permits` live rows per key, counted under the row lock of the key's
-- row above. A claim made at created_at (database clock) with a ttl of ttl_ms milliseconds has
-- expires_at = created_at + ttl_ms exactly, and counts until the earlier of expires_at and
-- created_at + ttl_ms: a claim no store makes (an expiry of 'infinity', or later than its ttl allows, a ttl
-- out of range, a creation time in the future) is reported as malformed, and never outlives its ttl.
CREATE TABLE IF NOT EXISTS "${schema}"."${table}_claims" (
    key_hash   bytea       NOT NULL REFERENCES "${schema}"."${table}" (key_hash) ON DELETE CASCADE,
    token      text        NOT NULL,
    created_at timestamptz NOT NULL,
    ttl_ms     bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (key_hash, token)
);

-- Every transition's event, in the transaction that makes it: read by polled feeds (feed=poll, in id order,
-- resuming after the last id they read) and by LISTEN feeds for events too large for a NOTIFY payload
-- (very long operation names: the payload then carries "ref:<id>"). Rows older than ten minutes are pruned.
CREATE TABLE IF NOT EXISTS "${schema}"."${table}_events" (
    id         bigserial   PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    line       text        NOT NULL
);

-- Clean-up indexes (the store's clean-up thread, PostgresStore.purgeExpired): expired states and placeholder
-- rows, expired claims, old events, each found through an index instead of a scan of its table. Forced
-- states never expire, so they are left out of the first one (a state pinned by its mode is stored with
-- expires_at NULL, so the index never finds it either). The suffixes are at most 7 characters, like
-- "_claims", so the names fit in an identifier for every table name the store accepts.
CREATE INDEX IF NOT EXISTS "${table}_exp_at" ON "${schema}"."${table}" (expires_at) WHERE NOT forced;
CREATE INDEX IF NOT EXISTS "${table}_cl_exp" ON "${schema}"."${table}_claims" (expires_at);
CREATE INDEX IF NOT EXISTS "${table}_ev_age" ON "${schema}"."${table}_events" (created_at);
