package dev.redeye.store.postgres;

import dev.redeye.api.StoreException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a store does with its tables when it is built: with {@code createSchema} on, creates the schema and the
 * tables that are missing (with their indexes, in one transaction) and builds an index missing from a table that
 * exists with {@code CREATE INDEX CONCURRENTLY}, outside any transaction, so that writes go on meanwhile; with it
 * off, only checks the layout and fails naming what is missing and the DDL to run. Either way a table that lacks
 * a column this version reads is an error naming the columns. Everything comes from {@code schema.sql}: its
 * statements are parsed once per store into tables (their columns) and indexes (their tables), so the check and
 * the DDL can never disagree. Immutable; used once per {@link PostgresStore} build.
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
    private static final Pattern TABLE = Pattern.compile("^CREATE TABLE IF NOT EXISTS (\"[^\"]+\"\\.\"[^\"]+\") \\(");
    private static final Pattern INDEX = Pattern.compile(
            "^CREATE INDEX IF NOT EXISTS (\"[^\"]+\") ON (\"[^\"]+\"\\.\"[^\"]+\") ");
    private static final Pattern COLUMN = Pattern.compile("^\\s+([a-z_][a-z0-9_]*)\\s+\\S");
    private static final Set<String> NOT_COLUMNS = Set.of("primary", "unique", "constraint", "foreign", "check");

    private final TableNames names;
    private final String createSchema;
    /** The CREATE TABLE statement of each table (quoted, schema-qualified), in the file's order. */
    private final Map<String, String> tables = new LinkedHashMap<>();
    private final Map<String, List<String>> columns = new LinkedHashMap<>();
    /** The indexes, schema-qualified and quoted, in the file's order. */
    private final List<Index> indexes = new ArrayList<>();

    private record Index(String qualifiedName, String table, String statement) {
        /** The statement that builds it without blocking writes (outside a transaction). */
        String concurrently() {
            return statement.replaceFirst("^CREATE INDEX IF NOT EXISTS ", "CREATE INDEX CONCURRENTLY IF NOT EXISTS ");
        }
    }

    /** What the database holds of the layout. */
    private record Found(boolean schema, Set<String> missingTables, Map<String, List<String>> missingColumns,
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
     * @throws StoreException if something is missing and {@code create} is off, a table lacks a column, or the
     *                        DDL fails
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
        if (!found.missingColumns.isEmpty() || !found.missingTables.isEmpty()) {
            throw new StoreException(missing(found, "a table was created by another version of the store"));
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

    private static List<String> columnsOf(String createTable) {
        List<String> out = new ArrayList<>();
        for (String line : createTable.split("\n")) {
            Matcher m = COLUMN.matcher(line);
            if (m.find() && !NOT_COLUMNS.contains(m.group(1).toLowerCase(Locale.ROOT))) {
                out.add(m.group(1));
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
        Map<String, List<String>> missingColumns = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT a.attname FROM pg_attribute a WHERE a.attrelid = "
                + "to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped")) {
            for (Map.Entry<String, List<String>> table : columns.entrySet()) {
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
                List<String> lacking = new ArrayList<>(table.getValue());
                lacking.removeAll(present);
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
            return sb.toString();
        }
        found.missingColumns.forEach((table, cols) -> sb.append(' ').append(table).append(" lacks column(s) ")
                .append(String.join(", ", cols)).append(" (this version reads them; its definition in ")
                .append(RESOURCE).append(":\n").append(tables.get(table)).append(");"));
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
