package dev.redeye.store.postgres;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The validated schema and table names of one store, their quoted forms, the NOTIFY channel derived from
 * them, and the DDL with the names filled in. Immutable.
 *
 * <p>Names are never taken from unchecked input: each must match {@code [A-Za-z_][A-Za-z0-9_]*} (so it
 * can hold no quote), and is always written double-quoted, so its case is kept exactly.
 */
final class TableNames {
    /** PostgreSQL truncates identifiers beyond NAMEDATALEN - 1 bytes. */
    static final int MAX_IDENTIFIER = 63;
    static final String CLAIMS_SUFFIX = "_claims";
    static final String EVENTS_SUFFIX = "_events";
    /** The table name leaves room for the longest suffix. */
    static final int MAX_TABLE = MAX_IDENTIFIER - CLAIMS_SUFFIX.length();
    /**
     * The suffixes of the clean-up indexes (of the states, claims and events tables), no longer than
     * {@link #CLAIMS_SUFFIX}, so every index name of a valid table fits in an identifier.
     */
    static final String STATES_EXPIRY_INDEX = "_exp_at";
    static final String CLAIMS_EXPIRY_INDEX = "_cl_exp";
    static final String EVENTS_AGE_INDEX = "_ev_age";

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final String DDL_RESOURCE = "schema.sql";
    private static final String DDL_TEMPLATE = loadTemplate();

    final String schema;
    final String table;
    /** {@code "schema"."table"}: the state table. */
    final String states;
    /** {@code "schema"."table_claims"}: the trial-claim table. */
    final String claims;
    /** {@code "schema"."table_events"}: events too large for a NOTIFY payload. */
    final String events;
    /** The NOTIFY channel, at most 63 bytes, safe to double-quote. */
    final String channel;
    /** The clean-up indexes, schema-qualified and quoted (see schema.sql). */
    final String statesExpiryIndex;
    final String claimsExpiryIndex;
    final String eventsAgeIndex;

    TableNames(String schema, String table) {
        this.schema = validate("schema", schema, MAX_IDENTIFIER);
        this.table = validate("table", table, MAX_TABLE);
        String s = quote(schema);
        this.states = s + "." + quote(table);
        this.claims = s + "." + quote(table + CLAIMS_SUFFIX);
        this.events = s + "." + quote(table + EVENTS_SUFFIX);
        this.channel = channelFor(schema, table);
        this.statesExpiryIndex = s + "." + quote(table + STATES_EXPIRY_INDEX);
        this.claimsExpiryIndex = s + "." + quote(table + CLAIMS_EXPIRY_INDEX);
        this.eventsAgeIndex = s + "." + quote(table + EVENTS_AGE_INDEX);
    }

    /**
     * Checks that {@code name} is a plain SQL identifier.
     *
     * @throws NullPointerException     if name is null
     * @throws IllegalArgumentException if it is empty, too long, or holds anything but ASCII letters, digits
     *                                  and underscores (or starts with a digit)
     */
    static String validate(String what, String name, int maxLength) {
        Objects.requireNonNull(name, what);
        if (!IDENTIFIER.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " name must be a plain SQL identifier matching "
                    + "[A-Za-z_][A-Za-z0-9_]*, was '" + printable(name) + "'");
        }
        if (name.length() > maxLength) {
            throw new IllegalArgumentException(what + " name must be at most " + maxLength
                    + " characters, was " + name.length());
        }
        return name;
    }

    static String quote(String identifier) {
        return '"' + identifier + '"';
    }

    /** The DDL of {@code schema.sql} with the placeholders replaced by these names. */
    String ddl() {
        return DDL_TEMPLATE.replace("${schema}", schema).replace("${table}", table);
    }

    private static String channelFor(String schema, String table) {
        String plain = "redeye:" + schema + "." + table;
        if (plain.length() <= MAX_IDENTIFIER) {
            return plain;
        }
        try {
            byte[] h = MessageDigest.getInstance("SHA-256")
                    .digest((schema + "." + table).getBytes(StandardCharsets.UTF_8));
            return "redeye:" + HexFormat.of().formatHex(h, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }

    private static String printable(String name) {
        String shortened = name.length() > 80 ? name.substring(0, 80) + "..." : name;
        StringBuilder sb = new StringBuilder(shortened.length());
        for (int i = 0; i < shortened.length(); i++) {
            char c = shortened.charAt(i);
            sb.append(Character.isISOControl(c) ? '?' : c);
        }
        return sb.toString();
    }

    private static String loadTemplate() {
        try (InputStream in = TableNames.class.getResourceAsStream(DDL_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + DDL_RESOURCE + " next to "
                        + TableNames.class.getName());
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + DDL_RESOURCE, e);
        }
    }
}
