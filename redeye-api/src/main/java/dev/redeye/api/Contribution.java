package dev.redeye.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What one instance of the fleet recorded in a breaker's current scope, for quorum opening
 * ({@link Policy#quorum()}, {@link Policy#quorumFraction()}): a state holds at most
 * {@link BreakerState#MAX_CONTRIBUTORS} of them, the most recent first.
 *
 * <p>Canonical text ({@link #encodeAll}, the stored layout): {@code instance,failures,calls,lastAt} per
 * contribution, joined by {@code ;}, most recent first. An instance id is 1 to {@value #MAX_INSTANCE_LENGTH}
 * characters of {@code A-Z a-z 0-9 . _ : @ # / -}, so it never holds a separator.
 *
 * @param instance the instance's id ({@link #requireValidInstance})
 * @param failures failures it recorded in the scope
 * @param calls    outcomes it recorded in the scope (failures included)
 * @param lastAt   when it last recorded one, epoch ms
 */
public record Contribution(String instance, int failures, int calls, long lastAt) {
    /** The longest instance id. */
    public static final int MAX_INSTANCE_LENGTH = 64;

    /**
     * Checks the invariants: a valid instance id, {@code 0 <= failures <= calls}.
     *
     * @throws IllegalArgumentException if one is broken
     */
    public Contribution {
        requireValidInstance(instance);
        if (failures < 0 || calls < failures) {
            throw new IllegalArgumentException("a contribution needs 0 <= failures <= calls: " + failures + ", "
                    + calls);
        }
    }

    /**
     * {@code id} if it is a valid instance id: 1 to {@value #MAX_INSTANCE_LENGTH} characters of
     * {@code A-Z a-z 0-9 . _ : @ # / -}.
     *
     * @throws IllegalArgumentException naming the rule, if it is not
     * @throws NullPointerException     if {@code id} is null
     */
    public static String requireValidInstance(String id) {
        Objects.requireNonNull(id, "instance id");
        boolean ok = !id.isEmpty() && id.length() <= MAX_INSTANCE_LENGTH;
        for (int i = 0; ok && i < id.length(); i++) {
            char c = id.charAt(i);
            ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
                    || c == ':' || c == '@' || c == '#' || c == '/' || c == '-';
        }
        if (!ok) {
            throw new IllegalArgumentException("an instance id is 1 to " + MAX_INSTANCE_LENGTH + " characters of "
                    + "A-Z a-z 0-9 . _ : @ # / -, was '" + OperationNames.abbreviate(id) + "'");
        }
        return id;
    }

    /** The canonical text of {@code contributions} (see the class comment); empty for none. */
    public static String encodeAll(List<Contribution> contributions) {
        StringBuilder sb = new StringBuilder();
        for (Contribution c : contributions) {
            if (sb.length() > 0) {
                sb.append(';');
            }
            sb.append(c.instance).append(',').append(c.failures).append(',').append(c.calls).append(',')
                    .append(c.lastAt);
        }
        return sb.toString();
    }

    /**
     * Reads what {@link #encodeAll} writes.
     *
     * @throws IllegalArgumentException if {@code text} is not that form, or holds more than
     *                                  {@link BreakerState#MAX_CONTRIBUTORS} contributions or one instance twice
     */
    public static List<Contribution> decodeAll(String text) {
        List<Contribution> out = new ArrayList<>();
        if (text.isEmpty()) {
            return out;
        }
        // one pass with indexOf (a record path decodes two states' contributions per call)
        int at = 0;
        int end = text.length();
        while (true) {
            int stop = text.indexOf(';', at);
            if (stop < 0) {
                stop = end;
            }
            int c1 = text.indexOf(',', at);
            int c2 = c1 < 0 || c1 > stop ? -1 : text.indexOf(',', c1 + 1);
            int c3 = c2 < 0 || c2 > stop ? -1 : text.indexOf(',', c2 + 1);
            if (c3 < 0 || c3 > stop || text.lastIndexOf(',', stop - 1) != c3) {
                throw new IllegalArgumentException("malformed contribution '"
                        + OperationNames.abbreviate(text.substring(at, stop)) + "': instance,failures,calls,lastAt");
            }
            out.add(new Contribution(text.substring(at, c1), Integer.parseInt(text, c1 + 1, c2, 10),
                    Integer.parseInt(text, c2 + 1, c3, 10), Long.parseLong(text, c3 + 1, stop, 10)));
            if (stop == end) {
                break;
            }
            at = stop + 1;
        }
        BreakerState.checkContributors(out);
        return out;
    }
}
