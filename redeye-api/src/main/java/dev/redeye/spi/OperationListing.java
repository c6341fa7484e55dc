package dev.redeye.spi;

import dev.redeye.api.BreakerState;
import dev.redeye.api.StoreException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Capability: the operations that hold a state in the store, listed in bounded pages behind an opaque cursor, for
 * the operator's views ({@code redeye status} without names, {@code redeye dashboard}). A listing only reads: it
 * creates, refreshes and removes nothing, and the breaker never calls it.
 *
 * <p><b>Pages.</b> The first page is asked with a {@code null} cursor; each page returns the cursor of the next
 * one, {@code null} after the last. A page holds at most {@code limit} entries and may hold fewer, none
 * included, before the end (a backend that scans a bounded slice per call, as Redis {@code SCAN} does): only a
 * {@code null} {@link Page#next()} ends the listing. A cursor is the store's own string; a caller passes back
 * exactly what it was given, to the same store (another client of it included).
 *
 * <p><b>What a listing returns.</b> Every operation that holds a live state from the start to the end of a whole
 * listing appears in it at least once (a backend that may return a name twice, as {@code SCAN} can while keys
 * are added, says so, and callers keep the last one); an operation never written, deleted or expired before the
 * listing started does not appear; trial claims alone are not a state. An operation written, deleted or expired
 * during the listing may or may not appear. Names are returned exactly as the user wrote them, as
 * {@link Store#get} takes them, however hostile. {@link Entry#state()} is the stored state as {@link Store#get}
 * would have returned it when the page was read, when the store reads it with the name at no extra cost (a row,
 * an item, a map entry), and empty when it lists names only; the caller then reads it with {@code get}.
 * Entries of one page are in the store's order, which need not be the names' order.
 */
public interface OperationListing {

    /** The largest {@code limit} a caller may ask for. */
    int MAX_LIMIT = 1_000;

    /**
     * Reads one page of the listing.
     *
     * @param cursor {@code null} for the first page, else {@link Page#next()} of the previous page
     * @param limit  the most entries the page may hold, 1 to {@value #MAX_LIMIT}
     * @return the page; its {@code next} is {@code null} after the last page
     * @throws IllegalArgumentException if {@code limit} is out of range, or {@code cursor} is not a cursor of
     *                                  this store's listings
     * @throws StoreException           if the backend fails, or the store is closed
     */
    Page page(String cursor, int limit);

    /**
     * One operation of a listing.
     *
     * @param operation the operation name, exactly as written
     * @param state     the stored state, or {@code null} when the store lists names only
     */
    record Entry(String operation, BreakerState state) {
        /**
         * @throws NullPointerException if {@code operation} is null
         */
        public Entry {
            Objects.requireNonNull(operation, "operation");
        }

        /** An entry of a store that lists names only. */
        public static Entry nameOnly(String operation) {
            return new Entry(operation, null);
        }

        /** The state read with the name, if the store reads it while listing. */
        public Optional<BreakerState> stateIfRead() {
            return Optional.ofNullable(state);
        }
    }

    /**
     * One page of a listing.
     *
     * @param entries the operations of this page, at most the limit asked for
     * @param next    the cursor of the next page, or {@code null} if this is the last one
     */
    record Page(List<Entry> entries, String next) {
        /**
         * @throws NullPointerException if {@code entries} or one of them is null
         */
        public Page {
            entries = List.copyOf(entries);
        }

        /** Whether this is the last page. */
        public boolean last() {
            return next == null;
        }
    }

    /**
     * Checks a {@code limit} argument of {@link #page}; for implementations.
     *
     * @return {@code limit}
     * @throws IllegalArgumentException if it is not 1 to {@value #MAX_LIMIT}
     */
    static int checkLimit(int limit) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be 1 to " + MAX_LIMIT + ", was " + limit);
        }
        return limit;
    }
}
