package dev.redeye.store.postgres;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Contribution;
import dev.redeye.api.OperationNames;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.StoreException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * One row of the state table as read ({@link StateSql#STATE_COLUMNS} or {@link StateSql#READ_COLUMNS}), before
 * validation, and the rules that
 * turn it into a {@link BreakerState}, "no state", or a {@link StoreException}. Immutable.
 */
final class StoredRow {
    /**
     * The layout code of a state without a sliding window and with the {@link BreakerMode#DEFAULT} mode
     * ({@code sliding_window} NULL, {@code mode} 0): the releases before sliding windows wrote and read it too.
     */
    static final int LAYOUT = 1;
    /**
     * The layout code of a state with a sliding window or a stored mode. The releases before sliding windows know
     * layouts 0 and 1 only and refuse any other as malformed (they neither read it nor write over it), so they
     * never read such a state without its window and mode and write it back without them.
     */
    static final int LAYOUT_WINDOW_OR_MODE = 2;
    /**
     * The layout code of a state with contributions ({@link BreakerState#contributors()}, kept under a quorum),
     * with or without a window or a mode. The releases before quorums know layouts 0, 1 and 2 only and refuse any
     * other as malformed, so they never read such a state without its contributions and write it back without
     * them.
     */
    static final int LAYOUT_CONTRIBUTORS = 3;
    /**
     * The layout code of the store's placeholder: a row without state that exists to hold trial claims or a
     * row lock, written with every state column at its default.
     */
    static final int LAYOUT_PLACEHOLDER = 0;

    final int layout;
    final int failures;
    final long lastFailureAt;
    final boolean open;
    final long openedAt;
    final int openCount;
    final double errorRate;
    final long samples;
    final int trialSuccesses;
    final boolean forced;
    final long version;
    /** {@code sliding_window}: the window's stored form, or null. */
    final String window;
    /** {@code mode}: the mode's code. */
    final int mode;
    /** {@code contributors}: {@link Contribution#encodeAll} of the contributions, or null for none. */
    final String contributors;
    final boolean expired;
    final long nowMicros;

    private StoredRow(ResultSet rs, boolean withClock) throws SQLException {
        layout = rs.getInt(1);
        failures = rs.getInt(2);
        lastFailureAt = rs.getLong(3);
        open = rs.getBoolean(4);
        openedAt = rs.getLong(5);
        openCount = rs.getInt(6);
        errorRate = rs.getDouble(7);
        samples = rs.getLong(8);
        trialSuccesses = rs.getInt(9);
        forced = rs.getBoolean(10);
        version = rs.getLong(11);
        window = rs.getString(12);
        mode = rs.getInt(13);
        contributors = rs.getString(14);
        expired = rs.getBoolean(15);
        nowMicros = withClock ? rs.getLong(16) : 0;
    }

    /**
     * The layout code a state is written with: {@link #LAYOUT_CONTRIBUTORS} when it has contributions, else
     * {@link #LAYOUT_WINDOW_OR_MODE} when it has a window or a mode, else {@link #LAYOUT}.
     */
    static int layoutOf(BreakerState s) {
        if (!s.contributors().isEmpty()) {
            return LAYOUT_CONTRIBUTORS;
        }
        return s.window() != null || s.mode() != BreakerMode.DEFAULT ? LAYOUT_WINDOW_OR_MODE : LAYOUT;
    }

    /**
     * The {@code contributors} value a state is written with: {@link Contribution#encodeAll}, or null when it has
     * none.
     */
    static String contributorsOf(BreakerState s) {
        return s.contributors().isEmpty() ? null : Contribution.encodeAll(s.contributors());
    }

    /** Whether {@code layout} is one of the state layouts this version reads and writes. */
    private static boolean isStateLayout(int layout) {
        return layout == LAYOUT || layout == LAYOUT_WINDOW_OR_MODE || layout == LAYOUT_CONTRIBUTORS;
    }

    /** Reads the {@link StateSql#STATE_COLUMNS} of the current row of {@code rs} (an atomic operation's). */
    static StoredRow read(ResultSet rs) throws SQLException {
        return new StoredRow(rs, true);
    }

    /** Reads the {@link StateSql#READ_COLUMNS} of the current row of {@code rs} (no clock: no version base). */
    static StoredRow readWithoutClock(ResultSet rs) throws SQLException {
        return new StoredRow(rs, false);
    }

    /**
     * Whether this is the store's own placeholder: layout 0 with every state column at the default the store
     * writes it with. A layout-0 row carrying anything else was not written by this store as a placeholder.
     */
    boolean isPlaceholder() {
        return layout == LAYOUT_PLACEHOLDER && failures == 0 && lastFailureAt == 0 && !open && openedAt == 0
                && openCount == 0 && errorRate == 0 && samples == 0
                && trialSuccesses == 0 && !forced && version == 0 && window == null && mode == 0 && contributors == null;
    }

    /**
     * The version a new life of the key starts at when this row holds no live state: the database clock in
     * microseconds (every earlier life started at an earlier clock and moved by one per transition, each a
     * committed transaction, far longer than a microsecond), and above the version of an expired state still
     * in the row, also when the clock is behind it (stepped back, a fail-over to a server whose clock lags):
     * a new life never starts at the version it replaces (TCK rule R1.12).
     */
    long versionBase() {
        return isStateLayout(layout) && expired && version >= 0
                ? Math.max(nowMicros, version == Long.MAX_VALUE ? version : version + 1) : nowMicros;
    }

    /**
     * The stored state; null for the store's placeholder or an expired state (never a forced one, see
     * {@link Sql#EXPIRED}).
     *
     * @throws StoreException if the row is neither a valid state of layout 1, 2 or 3 nor the store's placeholder:
     *                        an unknown layout, a layout-0 row carrying state, a layout that does not match the
     *                        row's window, mode and contributions ({@link #layoutOf}), a {@code contributors}
     *                        value {@link Contribution#decodeAll} refuses (or empty: none is NULL), or values no
     *                        BreakerState can hold (also when expired: malformed data is never read as "no state"
     *                        and overwritten)
     */
    BreakerState stateOrNull(String key) {
        if (layout == LAYOUT_PLACEHOLDER) {
            if (isPlaceholder()) {
                return null;
            }
            throw new StoreException("malformed breaker state for '" + OperationNames.abbreviate(key)
                    + "': layout 0 marks the store's placeholder, but this row carries state (failures "
                    + failures + ", open " + open + ", version " + version + "); it was not written by this "
                    + "store; delete the row to reuse the key");
        }
        if (!isStateLayout(layout)) {
            throw new StoreException("malformed breaker state for '" + OperationNames.abbreviate(key)
                    + "': unknown row layout " + layout + " (this version reads layouts " + LAYOUT + ", "
                    + LAYOUT_WINDOW_OR_MODE + " and " + LAYOUT_CONTRIBUTORS + ")");
        }
        if (contributors != null && contributors.isEmpty()) {
            // The store writes NULL for none: an empty value is no row it wrote.
            throw new StoreException("malformed breaker state for '" + OperationNames.abbreviate(key)
                    + "': contributors is empty (a state without contributions stores NULL); it was not written "
                    + "by this store");
        }
        BreakerState state;
        try {
            state = new BreakerState(failures, lastFailureAt, open, openedAt, openCount, errorRate, samples,
                    trialSuccesses, forced, window == null ? null : SlidingWindow.decode(window),
                    BreakerMode.fromCode(mode),
                    contributors == null ? List.of() : Contribution.decodeAll(contributors), version);
        } catch (IllegalArgumentException e) {
            throw new StoreException("malformed breaker state for '" + OperationNames.abbreviate(key) + "': "
                    + e.getMessage(), e);
        }
        if (layoutOf(state) != layout) {
            // Layout 1 is what the releases before sliding windows read, layouts 1 and 2 what the releases before
            // quorums read: a window, a mode or contributions in a layout its reader does not know would be lost.
            throw new StoreException("malformed breaker state for '" + OperationNames.abbreviate(key)
                    + "': row layout " + layout + " with " + (window == null ? "no sliding window" : "a sliding window")
                    + ", mode " + mode + " and " + (contributors == null ? "no contributions" : "contributions")
                    + " (layout " + LAYOUT_CONTRIBUTORS + " is a state with contributions, layout "
                    + LAYOUT_WINDOW_OR_MODE + " one without them and with a window or a mode other than 0, layout "
                    + LAYOUT + " one with none of them); it was not written by this store");
        }
        return expired ? null : state;
    }
}
