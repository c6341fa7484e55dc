package dev.redeye.tck;

import dev.redeye.tck.ReferenceModel.Verdict;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Decides whether a concurrent history is linearizable with respect to the {@link ReferenceModel} (R8.3):
 * whether some sequential order of all its calls (a) keeps each thread's calls in program order, (b) puts a
 * call that returned before another was invoked first (real-time order), and (c) makes the model return
 * exactly what each call returned. A depth-first search in the manner of Wing and Gong, with Lowe's memo of
 * (calls placed, model) pairs already known to lead nowhere; the histories of the TCK (a few threads of a
 * few calls) take microseconds. When no order exists, the result names the longest order the model does
 * explain and why each call that could come next does not fit. Stateless and thread-safe.
 *
 * <p>Every call takes effect at one point: a {@code force(CLOSED)}, {@code force(HALF_OPEN)} or {@code delete}
 * removes the key's claims at the point it changes the state, so a claim taken after that point outlives the
 * call (a store that changes the state and removes the claims in two steps is not linearizable).
 */
final class HistoryChecker {

    private HistoryChecker() {
    }

    /**
     * One completed call of a history.
     *
     * @param thread the thread that made it (0-based)
     * @param index  its place in the thread's program (0-based)
     * @param client the client it ran on ("a" or "b")
     * @param call   the call
     * @param seen   what it returned and when it ran
     */
    record Event(int thread, int index, String client, Call call, Observed seen) {
        /** "t2.1": thread 2, first call (1-based, as printed). */
        String label() {
            return "t" + (thread + 1) + "." + (index + 1);
        }

        /** The model after this event, or why it does not fit. */
        Verdict applyTo(ReferenceModel m) {
            return m.apply(call, seen);
        }
    }

    /**
     * The verdict on a history.
     *
     * @param linearizable whether an order exists
     * @param order        an order the model explains (all of it when linearizable, else the longest found)
     * @param after        the model after {@code order}
     * @param blocked      when not linearizable: why each call that could come after {@code order} does not
     */
    record Result(boolean linearizable, List<Event> order, ReferenceModel after, List<String> blocked) {
    }

    /**
     * Searches for an order of {@code threads} (each in program order) that the model, starting from
     * {@code start}, explains.
     */
    static Result check(ReferenceModel start, List<List<Event>> threads) {
        Search s = new Search(threads);
        if (s.dfs(new int[threads.size()], start)) {
            return new Result(true, List.copyOf(s.witness), null, List.of());
        }
        return new Result(false, s.deepest, s.deepestModel, s.deepestBlocked);
    }

    private static final class Search {
        private final List<List<Event>> threads;
        private final Set<List<Object>> dead = new HashSet<>();
        private final Deque<Event> prefix = new ArrayDeque<>();
        private List<Event> witness;
        private List<Event> deepest = List.of();
        private ReferenceModel deepestModel;
        private List<String> deepestBlocked = List.of();

        Search(List<List<Event>> threads) {
            this.threads = threads;
        }

        boolean dfs(int[] next, ReferenceModel m) {
            boolean done = true;
            for (int t = 0; t < threads.size(); t++) {
                done &= next[t] == threads.get(t).size();
            }
            if (done) {
                witness = new ArrayList<>(prefix);
                Collections.reverse(witness);
                return true;
            }
            List<Object> memo = List.of(Arrays.toString(next), m);
            if (dead.contains(memo)) {
                return false;
            }
            List<String> blocked = new ArrayList<>();
            for (int t = 0; t < threads.size(); t++) {
                if (next[t] == threads.get(t).size()) {
                    continue;
                }
                Event e = threads.get(t).get(next[t]);
                Optional<Event> before = mustPrecede(e, next);
                if (before.isPresent()) {
                    blocked.add(e.label() + " cannot come next: " + before.get().label() + " returned before it was "
                            + "called");
                    continue;
                }
                Verdict v = e.applyTo(m);
                if (!v.ok()) {
                    blocked.add(e.label() + " " + e.call().op().method + " does not fit next: " + v.mismatch());
                    continue;
                }
                next[t]++;
                prefix.push(e);
                boolean found = dfs(next, v.next());
                prefix.pop();
                next[t]--;
                if (found) {
                    return true;
                }
            }
            if (prefix.size() >= deepest.size()) {
                List<Event> order = new ArrayList<>(prefix);
                Collections.reverse(order);
                if (prefix.size() > deepest.size() || deepestBlocked.isEmpty()) {
                    deepest = order;
                    deepestModel = m;
                    deepestBlocked = blocked;
                }
            }
            dead.add(memo);
            return false;
        }

        /** A pending call of another thread that returned before {@code e} was called, if any. */
        private Optional<Event> mustPrecede(Event e, int[] next) {
            for (int u = 0; u < threads.size(); u++) {
                if (u == e.thread() || next[u] == threads.get(u).size()) {
                    continue;
                }
                Event f = threads.get(u).get(next[u]);
                if (f.seen().endNanos() - e.seen().startNanos() < 0) {
                    return Optional.of(f);
                }
            }
            return Optional.empty();
        }
    }
}
