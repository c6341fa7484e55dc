package dev.redeye.http;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * An immutable set of HTTP status codes, written as single codes ({@code 404}), classes ({@code 5xx}) and
 * inclusive ranges ({@code 500-504}), separated by commas: {@code "429, 5xx"}. Used by a rule's
 * {@code successStatuses} and {@code failureStatuses}.
 *
 * <p>{@link #contains(int)} is a scan of a few ranges, allocation-free. Thread-safe.
 */
public final class StatusCodes {
    /** No status at all: the rule has no such list. */
    public static final StatusCodes NONE = new StatusCodes(new int[0], "");

    private final int[] ranges; // pairs: low, high (inclusive)
    private final String text;

    private StatusCodes(int[] ranges, String text) {
        this.ranges = ranges;
        this.text = text;
    }

    /**
     * Parses {@code "404"}, {@code "5xx"}, {@code "500-504"} or a comma-separated list of them; blank gives
     * {@link #NONE}.
     *
     * @throws IllegalArgumentException naming the bad item, for anything else or a code outside 100..599
     * @throws NullPointerException     if {@code spec} is null
     */
    public static StatusCodes parse(String spec) {
        Objects.requireNonNull(spec, "spec");
        List<String> items = new ArrayList<>();
        for (String item : spec.split(",")) {
            if (!item.isBlank()) {
                items.add(item.trim());
            }
        }
        return parse(items);
    }

    /**
     * Parses each item as {@link #parse(String)} does (an item may itself be a comma-separated list).
     *
     * @throws IllegalArgumentException naming the bad item
     */
    public static StatusCodes parse(Collection<?> items) {
        List<int[]> out = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        for (Object o : items) {
            if (o instanceof Number) {
                int code = ((Number) o).intValue();
                out.add(range(code, code, String.valueOf(o)));
                texts.add(String.valueOf(code));
                continue;
            }
            for (String part : String.valueOf(o).split(",")) {
                String item = part.trim().toLowerCase(Locale.ROOT);
                if (item.isEmpty()) {
                    continue;
                }
                out.add(parseItem(item));
                texts.add(item);
            }
        }
        int[] flat = new int[out.size() * 2];
        for (int i = 0; i < out.size(); i++) {
            flat[2 * i] = out.get(i)[0];
            flat[2 * i + 1] = out.get(i)[1];
        }
        return flat.length == 0 ? NONE : new StatusCodes(flat, String.join(",", texts));
    }

    /** The given single codes. @throws IllegalArgumentException for a code outside 100..599 */
    public static StatusCodes of(int... codes) {
        List<Object> items = new ArrayList<>();
        for (int c : codes) {
            items.add(c);
        }
        return parse(items);
    }

    private static int[] parseItem(String item) {
        try {
            if (item.length() == 3 && item.endsWith("xx")) {
                int cls = Integer.parseInt(item.substring(0, 1));
                return range(cls * 100, cls * 100 + 99, item);
            }
            int dash = item.indexOf('-');
            if (dash > 0) {
                return range(Integer.parseInt(item.substring(0, dash).trim()),
                        Integer.parseInt(item.substring(dash + 1).trim()), item);
            }
            int code = Integer.parseInt(item);
            return range(code, code, item);
        } catch (NumberFormatException e) {
            throw bad(item);
        }
    }

    private static int[] range(int low, int high, String item) {
        if (low < 100 || high > 599 || low > high) {
            throw bad(item);
        }
        return new int[] {low, high};
    }

    private static IllegalArgumentException bad(String item) {
        return new IllegalArgumentException("bad HTTP status '" + item + "': expected a code (404), a class (5xx) "
                + "or a range (500-504) within 100..599");
    }

    /** Whether {@code status} is in this set. */
    public boolean contains(int status) {
        int[] r = ranges;
        for (int i = 0; i < r.length; i += 2) {
            if (status >= r[i] && status <= r[i + 1]) {
                return true;
            }
        }
        return false;
    }

    /** Whether this set holds no code. */
    public boolean isEmpty() {
        return ranges.length == 0;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StatusCodes && Arrays.equals(ranges, ((StatusCodes) o).ranges);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(ranges);
    }

    /** The set as it was written, normalised ({@code "429,5xx"}). */
    @Override
    public String toString() {
        return text;
    }
}
