package dev.redeye.store.postgres;

import dev.redeye.api.StoreException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a store does with its tables when it is built: with {@code createSchema} on, creates the schema and the
 * tables that are missing (with their indexes, in one transaction), adds the columns missing from a table that
 * exists (an earlier version made it; see {@link #addColumns}), and builds an index missing from a table that
 * exists with {@code CREATE INDEX CONCURRENTLY}, outside any transaction, so that writes go on meanwhile; with it
 * off, only checks the layout and fails naming what is missing and the statements to run. Everything comes from
 * {@code schema.sql}: its statements are parsed once per store into tables (their columns, one per line, each
 * with its definition) and indexes (their tables), so the check and the DDL can never disagree. Immutable; used
 * once per {@link PostgresStore} build.
 */
final class SchemaSetup {
    private static final Logger LOG = LoggerFactory.getLogger(SchemaSetup.class);
    /** The resource the DDL ships as, inside the jar. */
    static final String RESOURCE = "dev/redeye/store/postgres/schema.sql";
    /**
     * The bounds of the transaction that creates missing tables (it may queue behind other instances doing the
     * same, serialized by an advisory lock): its own, not the calls'.
     */
    private static final String DDL_TIMEOUTS = "SELECT set_config('lock_timeout', '30000', true), "
            + "set_config('statement_timeout', '30000', true)";
    /**
     * How long one attempt at the exclusive lock that adding columns needs may wait: while it waits in a table's
     * lock queue, every call on the table queues behind it, so it waits no longer than a breaker call's own lock
     * budget (lockTimeout, 1 s by default) can take, gives way, and tries again.
     */
    private static final long TABLE_LOCK_ATTEMPT_MILLIS = 500;
    /** How long the attempts at that lock go on before the build fails. */
    private static final long TABLE_LOCK_DEADLINE_MILLIS = 30_000;
    private static final Pattern TABLE = Pattern.compile("^CREATE TABLE IF NOT EXISTS (\"[^\"]+\"\\.\"[^\"]+\") \\(");
    private static final Pattern INDEX = Pattern.compile(
            "^CREATE INDEX IF NOT EXISTS (\"[^\"]+\") ON (\"[^\"]+\"\\.\"[^\"]+\") ");
    private static final Pattern COLUMN = Pattern.compile("^\\s+([a-z_][a-z0-9_]*)\\s+\\S");
    private static final Pattern NOT_NULL = Pattern.compile("\\b(NOT\\s+NULL|PRIMARY\\s+KEY)\\b",
            Pattern.CASE_INSENSITIVE);
    private static final Pattern DEFAULT = Pattern.compile("\\bDEFAULT\\b", Pattern.CASE_INSENSITIVE);
    private static final Set<String> NOT_COLUMNS = Set.of("primary", "unique", "constraint", "foreign", "check");

    private final TableNames names;
    private final String createSchema;
    /** The CREATE TABLE statement of each table (quoted, schema-qualified), in the file's order. */
    private final Map<String, String> tables = new LinkedHashMap<>();
    private final Map<String, List<Column>> columns = new LinkedHashMap<>();
    /** The indexes, schema-qualified and quoted, in the file's order. */
    private final List<Index> indexes = new ArrayList<>();

    /**
     * A column as schema.sql declares it; {@code definition} is its line (runs of whitespace made one space, the
     * trailing comma dropped): what {@code ALTER TABLE ... ADD COLUMN} takes.
     */
    private record Column(String name, String definition) {
        /** NOT NULL without a DEFAULT: it can be added to an empty table only. */
        boolean needsEmptyTable() {
            return NOT_NULL.matcher(definition).find() && !DEFAULT.matcher(definition).find();
        }
    }

    private record Index(String qualifiedName, String table, String statement) {
        /** The statement that builds it without blocking writes (outside a transaction). */
        String concurrently() {
            return statement.replaceFirst("^CREATE INDEX IF NOT EXISTS ", "CREATE INDEX CONCURRENTLY IF NOT EXISTS ");
        }
    }

    /** What the database holds of the layout. */
    private record Found(boolean schema, Set<String> missingTables, Map<String, List<Column>> missingColumns,
                         List<Index> missingIndexes, List<Index> invalidIndexes) {
        boolean complete() {
            return schema && missingTables.isEmpty() && missingColumns.isEmpty() && missingIndexes.isEmpty()
                    && invalidIndexes.isEmpty();
        }
    }

    SchemaSetup(TableNames names) {
        this.names = names;
        String create = null;
        for (String statement : statements(names.ddl())) {
            Matcher t = TABLE.matcher(statement);
            Matcher i = INDEX.matcher(statement);
            if (statement.startsWith("CREATE SCHEMA ")) {
                create = statement;
            } else if (t.find()) {
                tables.put(t.group(1), statement);
                columns.put(t.group(1), columnsOf(statement));
            } else if (i.find()) {
                String schemaPrefix = TableNames.quote(names.schema) + ".";
                indexes.add(new Index(schemaPrefix + i.group(1), i.group(2), statement));
            } else {
                throw new IllegalStateException("schema.sql holds a statement the store does not know: " + statement);
            }
        }
        if (create == null || tables.size() != 3 || indexes.isEmpty()) {
            throw new IllegalStateException("schema.sql lost a statement: " + tables.keySet() + ", " + indexes);
        }
        this.createSchema = create;
    }

    /**
     * Creates what is missing ({@code create}) or checks that nothing is.
     *
     * @throws StoreException if something is missing and {@code create} is off, a table with rows (but the claims
     *                        table) lacks a NOT NULL column without a DEFAULT, or the DDL fails
     */
    void prepare(SqlRunner runner, boolean create) {
        Found found = runner.call("check the tables", "", (c, a) -> inspect(c));
        if (found.complete()) {
            return;
        }
        if (!create) {
            throw new StoreException(missing(found, "createSchema is off"));
        }
        if (!found.schema || !found.missingTables.isEmpty()) {
            runner.transaction("create tables", "", (c, a) -> createTables(c));
            found = runner.call("check the tables", "", (c, a) -> inspect(c));
        }
        if (!found.missingColumns.isEmpty()) {
            runner.transaction("add columns", "", (c, a) -> addColumns(c));
            found = runner.call("check the tables", "", (c, a) -> inspect(c));
        }
        if (!found.missingColumns.isEmpty() || !found.missingTables.isEmpty()) {
            throw new StoreException(missing(found, "they changed while the store set them up"));
        }
        for (Index index : found.invalidIndexes) {
            runner.call("rebuild index", "", (c, a) -> rebuild(c, index));
        }
        for (Index index : found.missingIndexes) {
            runner.call("build index", "", (c, a) -> build(c, index));
        }
    }

    /** The statements of a script: comment lines dropped, split where a line ends with a semicolon. */
    private static List<String> statements(String script) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : script.split("\n")) {
            if (line.trim().startsWith("--") || line.isBlank()) {
                continue;
            }
            current.append(current.length() == 0 ? "" : "\n").append(line);
            if (line.trim().endsWith(";")) {
                String s = current.toString().trim();
                out.add(s.substring(0, s.length() - 1));
                current.setLength(0);
            }
        }
        if (current.length() > 0) {
            throw new IllegalStateException("schema.sql ends inside a statement: " + current);
        }
        return out;
    }

    private static List<Column> columnsOf(String createTable) {
        List<Column> out = new ArrayList<>();
        for (String line : createTable.split("\n")) {
            Matcher m = COLUMN.matcher(line);
            if (m.find() && !NOT_COLUMNS.contains(m.group(1).toLowerCase(Locale.ROOT))) {
                String definition = line.trim().replaceAll("\\s+", " ");
                if (definition.endsWith(",")) {
                    definition = definition.substring(0, definition.length() - 1);
                }
                out.add(new Column(m.group(1), definition));
            }
        }
        return out;
    }

    private Found inspect(Connection c) throws SQLException {
        boolean schema;
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regnamespace(?) IS NOT NULL")) {
            ps.setString(1, TableNames.quote(names.schema));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                schema = rs.getBoolean(1);
            }
        }
        Set<String> missingTables = new LinkedHashSet<>();
        Map<String, List<Column>> missingColumns = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT a.attname FROM pg_attribute a WHERE a.attrelid = "
                + "to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped")) {
            for (Map.Entry<String, List<Column>> table : columns.entrySet()) {
                ps.setString(1, table.getKey());
                Set<String> present = new LinkedHashSet<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        present.add(rs.getString(1));
                    }
                }
                if (present.isEmpty()) {
                    missingTables.add(table.getKey());
                    continue;
                }
                List<Column> lacking = new ArrayList<>();
                for (Column column : table.getValue()) {
                    if (!present.contains(column.name)) {
                        lacking.add(column);
                    }
                }
                if (!lacking.isEmpty()) {
                    missingColumns.put(table.getKey(), lacking);
                }
            }
        }
        List<Index> missingIndexes = new ArrayList<>();
        List<Index> invalidIndexes = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT (SELECT i.indisvalid FROM pg_index i "
                + "WHERE i.indexrelid = r.oid) FROM (SELECT to_regclass(?) AS oid) r")) {
            for (Index index : indexes) {
                if (missingTables.contains(index.table)) {
                    missingIndexes.add(index);
                    continue;
                }
                ps.setString(1, index.qualifiedName);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    boolean valid = rs.getBoolean(1);
                    if (rs.wasNull()) {
                        missingIndexes.add(index);
                    } else if (!valid) {
                        invalidIndexes.add(index);
                    }
                }
            }
        }
        return new Found(schema, missingTables, missingColumns, missingIndexes, invalidIndexes);
    }

    /**
     * Creates the schema and the missing tables with their indexes, serialized across processes by an advisory
     * lock (concurrent CREATE ... IF NOT EXISTS can collide in the catalog). A new table is empty and invisible to
     * everyone else until this commits, so its indexes are built here at no cost to anyone.
     */
    private Void createTables(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(DDL_TIMEOUTS);
            st.execute("SELECT pg_advisory_xact_lock(hashtext('" + names.states.replace("'", "''") + "'))");
            Found now = inspect(c); // under the lock: another instance may have created them meanwhile
            List<String> ddl = new ArrayList<>();
            if (!now.schema) {
                ddl.add(createSchema);
            }
            for (String table : now.missingTables) {
                ddl.add(tables.get(table));
                for (Index index : indexes) {
                    if (index.table.equals(table)) {
                        ddl.add(index.statement);
                    }
                }
            }
            for (String statement : ddl) {
                st.execute(statement);
            }
            if (!ddl.isEmpty()) {
                LOG.info("created {} of {} ({} statements)", now.schema ? "the missing tables" : "the schema and tables",
                        names.states, ddl.size());
            }
        } catch (SQLException e) {
            throw new StoreException("cannot create the tables of " + names.states + " [SQLSTATE " + e.getSQLState()
                    + "]: " + e.getMessage() + "; create them from " + RESOURCE + " (PostgresStore.schemaSql), "
                    + "or grant CREATE on the schema", e);
        }
        return null;
    }

    /**
     * Adds the columns missing from tables that exist, each as schema.sql declares it ({@code ADD COLUMN IF NOT
     * EXISTS}, so that a column someone else added meanwhile is skipped), in one transaction:
     * <ul>
     * <li>serialized across instances by the advisory lock {@link #createTables} takes: an instance waiting for it
     *     waits outside the tables' lock queues, so it holds up no call, and then finds the columns there;</li>
     * <li>the tables' exclusive lock, which {@code ALTER TABLE} needs, is asked for in attempts of
     *     {@link #TABLE_LOCK_ATTEMPT_MILLIS}: every call on a table queues behind a waiting request for its lock,
     *     so a request that is not granted soon (a long transaction uses the table) gives way, and calls go on
     *     until the next attempt, for up to {@link #TABLE_LOCK_DEADLINE_MILLIS};</li>
     * <li>once the lock is granted, adding a column whose DEFAULT is a constant (or that has none) changes the
     *     catalog only (PostgreSQL 11 and later): the lock is held for milliseconds whatever the table holds;</li>
     * <li>a NOT NULL column without a DEFAULT cannot be added to a table with rows: the claims table, whose rows
     *     are trial claims that live seconds, is emptied first (one extra trial per key may run); any other table
     *     with rows fails the build with the statement, and nothing is changed.</li>
     * </ul>
     */
    private Void addColumns(Connection c) throws SQLException {
        Map<String, List<Column>> missing = Map.of();
        try (Statement st = c.createStatement()) {
            st.execute(DDL_TIMEOUTS);
            st.execute("SELECT pg_advisory_xact_lock(hashtext('" + names.states.replace("'", "''") + "'))");
            missing = inspect(c).missingColumns;
            if (missing.isEmpty()) {
                return null; // another instance added them while this one waited for the advisory lock
            }
            lockExclusively(c, st, missing);
            missing = inspect(c).missingColumns; // under the tables' locks nothing changes any more
            for (Map.Entry<String, List<Column>> table : missing.entrySet()) {
                if (table.getValue().stream().anyMatch(Column::needsEmptyTable) && hasRows(st, table.getKey())) {
                    if (!table.getKey().equals(names.claims)) {
                        throw new StoreException(refusal(table.getKey(), table.getValue()));
                    }
                    int dropped = st.executeUpdate("DELETE FROM " + names.claims);
                    LOG.warn("dropped {} trial claim(s) of {} to add its NOT NULL column(s) {}: one extra trial may "
                            + "run for each of their keys", dropped, names.claims, columnNames(table.getValue()));
                }
                st.execute(alterTable(table.getKey(), table.getValue()));
                LOG.info("added column(s) {} to {}", columnNames(table.getValue()), table.getKey());
            }
        } catch (SQLException e) {
            throw new StoreException("cannot add the missing columns to the tables of " + names.states
                    + " [SQLSTATE " + e.getSQLState() + "]: " + e.getMessage() + "; add them "
                    + addColumnsDdl(missing), e);
        }
        return null;
    }

    /**
     * Takes the exclusive locks of the tables in {@code missing} in schema.sql's order (every instance locks in
     * that order, so two never deadlock), each attempt waiting at most {@link #TABLE_LOCK_ATTEMPT_MILLIS}, again
     * from a savepoint (the advisory lock stays held) until {@link #TABLE_LOCK_DEADLINE_MILLIS}.
     */
    private void lockExclusively(Connection c, Statement st, Map<String, List<Column>> missing) throws SQLException {
        st.execute("SELECT set_config('lock_timeout', '" + TABLE_LOCK_ATTEMPT_MILLIS + "', true)");
        String lock = "LOCK TABLE " + String.join(", ", missing.keySet()) + " IN ACCESS EXCLUSIVE MODE";
        long start = System.nanoTime();
        for (int attempt = 1; ; attempt++) {
            Savepoint before = c.setSavepoint();
            try {
                st.execute(lock);
                c.releaseSavepoint(before);
                return;
            } catch (SQLException e) {
                if (!Sql.LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                    throw e;
                }
                long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                if (waited >= TABLE_LOCK_DEADLINE_MILLIS) {
                    throw new StoreException("cannot add the missing columns to the tables of " + names.states
                            + ": their exclusive lock was not granted in " + attempt + " attempts of "
                            + TABLE_LOCK_ATTEMPT_MILLIS + " ms over " + waited + " ms (a transaction keeps a table "
                            + "busy: see pg_locks and pg_stat_activity; each attempt gave way so as not to hold the "
                            + "table's calls behind it); start the store again once it ends, or add them "
                            + addColumnsDdl(missing), e);
                }
                c.rollback(before);
                if (attempt == 1) {
                    LOG.info("waiting for the exclusive lock of {} to add column(s), in attempts of {} ms that give "
                            + "way to the tables' calls", missing.keySet(), TABLE_LOCK_ATTEMPT_MILLIS);
                }
                pauseBetweenAttempts();
            }
        }
    }

    private static void pauseBetweenAttempts() {
        try {
            Thread.sleep(ThreadLocalRandom.current().nextLong(50, 250));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("interrupted while waiting to add the missing columns", e);
        }
    }

    private static boolean hasRows(Statement st, String table) throws SQLException {
        try (ResultSet rs = st.executeQuery("SELECT EXISTS (SELECT 1 FROM " + table + ")")) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    /** The one statement that adds {@code missing} to {@code table}. */
    private static String alterTable(String table, List<Column> missing) {
        StringBuilder sb = new StringBuilder("ALTER TABLE ").append(table);
        for (int i = 0; i < missing.size(); i++) {
            sb.append(i == 0 ? " " : ", ").append("ADD COLUMN IF NOT EXISTS ").append(missing.get(i).definition);
        }
        return sb.toString();
    }

    private static String columnNames(List<Column> columns) {
        List<String> out = new ArrayList<>();
        columns.forEach(column -> out.add(column.name));
        return String.join(", ", out);
    }

    private static String strictNames(List<Column> columns) {
        return columnNames(columns.stream().filter(Column::needsEmptyTable).toList());
    }

    /**
     * How to add {@code missing} by hand: the statements, as one transaction, and what they do. The claims table
     * is locked and emptied first when a NOT NULL column without a DEFAULT is added to it; {@code lock_timeout}
     * keeps them from holding the tables' calls for long while they wait for a lock.
     */
    private String addColumnsDdl(Map<String, List<Column>> missing) {
        if (missing.isEmpty()) {
            return "from the definitions in " + RESOURCE;
        }
        StringBuilder notes = new StringBuilder();
        StringBuilder ddl = new StringBuilder("BEGIN;\nSET LOCAL lock_timeout = '1s';\n");
        missing.forEach((table, cols) -> {
            String strict = strictNames(cols);
            if (!strict.isEmpty() && table.equals(names.claims)) {
                notes.append(" The DELETE empties ").append(table).append(" (").append(strict).append(": NOT NULL "
                        + "without a DEFAULT); its rows are trial claims that live seconds, and dropping them may let "
                        + "one extra trial run per key.");
                ddl.append("LOCK TABLE ").append(table).append(" IN ACCESS EXCLUSIVE MODE;\n")
                        .append("DELETE FROM ").append(table).append(";\n");
            } else if (!strict.isEmpty()) {
                notes.append(' ').append(table).append(" (").append(strict).append(": NOT NULL without a DEFAULT): "
                        + "the ALTER fails while the table holds rows (add them nullable, fill them, then ALTER "
                        + "COLUMN ... SET NOT NULL).");
            }
            ddl.append(alterTable(table, cols)).append(";\n");
        });
        return "as the tables' owner, in one transaction (if it fails on its lock_timeout, a transaction kept a "
                + "table busy: run it again; waiting longer would hold every call on the table behind it)." + notes
                + "\n" + ddl + "COMMIT;\n";
    }

    /** Why a NOT NULL column without a DEFAULT is not added to a table with rows. */
    private String refusal(String table, List<Column> missing) {
        return "the tables of " + names.states + " are incomplete: " + table + " lacks column(s) "
                + columnNames(missing) + " (this version reads them), and " + strictNames(missing) + ", NOT NULL "
                + "without a DEFAULT in " + RESOURCE + ", cannot be added while the table holds rows; nothing was "
                + "changed. Fill them by hand (add each nullable, set its values, then ALTER COLUMN ... SET NOT NULL), "
                + "or empty the table; on an empty table the store runs: " + alterTable(table, missing) + ";";
    }

    /**
     * Builds one missing index of an existing table without blocking its writes: {@code CREATE INDEX CONCURRENTLY}
     * on an autocommit connection (it cannot run in a transaction), with no statement timeout for it (it waits
     * for every transaction that could use the table, then scans it; a cancelled build leaves an invalid index).
     */
    private Void build(Connection c, Index index) throws SQLException {
        LOG.info("building index {} concurrently (writes go on meanwhile)", index.qualifiedName);
        try (Statement st = c.createStatement()) {
            String timeout;
            try (ResultSet rs = st.executeQuery("SHOW statement_timeout")) {
                rs.next();
                timeout = rs.getString(1);
            }
            st.execute("SET statement_timeout = 0");
            try {
                st.execute(index.concurrently());
            } finally {
                st.execute("SET statement_timeout = '" + timeout.replace("'", "''") + "'");
            }
        }
        return null;
    }

    /** Drops an invalid index (a concurrent build that failed) and builds it again, unless it is being built now. */
    private Void rebuild(Connection c, Index index) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_progress_create_index "
                + "WHERE index_relid = to_regclass(?)")) {
            ps.setString(1, index.qualifiedName);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getLong(1) > 0) {
                    return null; // another instance is building it
                }
            }
        }
        LOG.warn("index {} is invalid (a concurrent build that did not finish); building it again",
                index.qualifiedName);
        try (Statement st = c.createStatement()) {
            st.execute("DROP INDEX CONCURRENTLY IF EXISTS " + index.qualifiedName);
        }
        return build(c, index);
    }

    /** The message naming what is missing and the statements to run. */
    private String missing(Found found, String why) {
        StringBuilder sb = new StringBuilder("the tables of ").append(names.states)
                .append(" are incomplete (").append(why).append("):");
        if (!found.schema || !found.missingTables.isEmpty()) {
            sb.append(found.schema ? "" : " schema " + TableNames.quote(names.schema) + " is missing;");
            if (!found.missingTables.isEmpty()) {
                sb.append(" missing table(s) ").append(String.join(", ", found.missingTables)).append(';');
            }
            sb.append(" run the DDL in the jar at ").append(RESOURCE)
                    .append(" (PostgresStore.schemaSql(schema, table) fills in the names), here:\n")
                    .append(names.ddl().trim());
        }
        if (!found.missingColumns.isEmpty()) {
            found.missingColumns.forEach((table, cols) -> sb.append(' ').append(table).append(" lacks column(s) ")
                    .append(columnNames(cols)).append(';'));
            sb.append(" this version reads them (their definitions: ").append(RESOURCE).append("). Add them ")
                    .append(addColumnsDdl(found.missingColumns));
        }
        if (!found.schema || !found.missingTables.isEmpty()) {
            return sb.toString(); // the DDL above creates the indexes of the tables it creates
        }
        for (Index index : found.invalidIndexes) {
            sb.append(" index ").append(index.qualifiedName).append(" is invalid (a concurrent build that failed); "
                    + "run outside a transaction: DROP INDEX CONCURRENTLY IF EXISTS ").append(index.qualifiedName)
                    .append("; ").append(index.concurrently()).append(';');
        }
        for (Index index : found.missingIndexes) {
            sb.append(" index ").append(index.qualifiedName).append(" is missing; run outside a transaction (it "
                    + "does not block writes): ").append(index.concurrently()).append(';');
        }
        return sb.toString();
    }
}
