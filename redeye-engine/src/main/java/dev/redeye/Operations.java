package dev.redeye;

import dev.redeye.api.OperationNames;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry of a breaker's per-operation state, bounded by {@code maxOperations} with an approximate
 * least-recently-used eviction.
 *
 * <p>Recency is an insert tick, not a clock: every new operation bumps the tick, and a use stamps the entry
 * with the current tick only when its stamp differs. The healthy path therefore costs one map lookup, one
 * volatile read and (once per insert, not per call) one write; no allocation, no lock. Past
 * {@code maxOperations} the insert that crossed the limit evicts, in one pass, the entries with the oldest
 * stamps down to 90% of the limit (amortised: a sort of the map every tenth of the limit's inserts). Entries
 * with a trial in flight are never evicted. Entries used since the last insert share one stamp, so the order
 * among them is arbitrary: that is the "approximate" part.
 *
 * <p>An evicted operation loses this instance's metrics and cached views; the eviction hook decides what else
 * goes (in local mode the operation's stored state unless it is open). A caller that looked the entry up just
 * before its eviction finishes its call on the detached entry; the next call starts a new one.
 *
 * <p>Thread-safe. Evictions are serialised by one lock that the healthy path never takes.
 */
final class Operations {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);
    static final int LONG_NAME = 100;

    private final ConcurrentHashMap<String, OperationState> map = new ConcurrentHashMap<>();
    private final int max;
    private final Consumer<OperationState> onEvict;
    private final Consumer<OperationState> onAdd;
    private final Object evictionLock = new Object();
    private final AtomicBoolean longNameWarned = new AtomicBoolean();
    private final AtomicBoolean overMaxWarned = new AtomicBoolean();
    private volatile long tick;

    /**
     * @param max     the most operations kept, 0 for no limit
     * @param onEvict told of each evicted entry, after it left the map; must not throw
     * @param onAdd   told of each new entry, after it entered the map, on the thread that created it; must
     *                not throw
     */
    Operations(int max, Consumer<OperationState> onEvict, Consumer<OperationState> onAdd) {
        this.max = max;
        this.onEvict = onEvict;
        this.onAdd = onAdd;
    }

    /**
     * The entry of {@code operation}, created if needed, stamped as used.
     *
     * @throws NullPointerException     if {@code operation} is null
     * @throws IllegalArgumentException if a new name breaks {@link OperationNames#requireValid the rule}
     */
    OperationState use(String operation) {
        OperationState e = map.get(Objects.requireNonNull(operation, "operation"));
        if (e == null) {
            return register(operation);
        }
        long t = tick;
        if (e.lastUsed != t) {
            e.lastUsed = t;
        }
        return e;
    }

    /** The entry of {@code operation} if this breaker has it, without creating it or stamping it. */
    OperationState peek(String operation) {
        return map.get(operation);
    }

    /** Every live entry (a weakly consistent view). */
    Collection<OperationState> all() {
        return map.values();
    }

    int size() {
        return map.size();
    }

    /**
     * Creates the entry of a name seen for the first time: the one place a name is checked
     * ({@link OperationNames#requireValid}), so that an invalid name never reaches a store and a valid one is
     * checked once, not per call.
     */
    private OperationState register(String operation) {
        OperationNames.requireValid(operation);
        boolean[] created = new boolean[1];
        OperationState e = map.computeIfAbsent(operation, name -> {
            created[0] = true;
            OperationState s = new OperationState(name);
            s.lastUsed = ++tick; // a racy increment: two inserts may share a tick, which only blurs the order
            return s;
        });
        if (!created[0]) {
            return e;
        }
        onAdd.accept(e);
        if (operation.length() > LONG_NAME && longNameWarned.compareAndSet(false, true)) {
            LOG.warn("operation name of {} characters (over {}): names are stored and logged, keep them short; "
                    + "'{}'", operation.length(), LONG_NAME, OperationNames.abbreviate(operation));
        }
        if (max > 0 && map.size() > max) {
            if (overMaxWarned.compareAndSet(false, true)) {
                LOG.warn("more than {} distinct operations (maxOperations) on one breaker: evicting the least "
                        + "recently used ones (their metrics and cached state on this instance); unbounded names "
                        + "(ids, URLs) also leak store keys", max);
            }
            evict(e);
        }
        return e;
    }

    /** Evicts the oldest entries down to 90% of the limit, never {@code keep} nor one with a trial running. */
    private void evict(OperationState keep) {
        List<OperationState> victims;
        synchronized (evictionLock) {
            int size = map.size();
            if (size <= max) {
                return; // another insert evicted meanwhile
            }
            int target = max - max / 10;
            List<OperationState> candidates = new ArrayList<>(size);
            for (OperationState s : map.values()) {
                if (s != keep && !s.hasTrialInFlight()) {
                    candidates.add(s);
                }
            }
            candidates.sort((a, b) -> Long.compare(a.lastUsed, b.lastUsed));
            int n = Math.min(candidates.size(), size - target);
            victims = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                OperationState v = candidates.get(i);
                if (map.remove(v.name, v)) {
                    victims.add(v);
                }
            }
        }
        for (OperationState v : victims) {
            onEvict.accept(v);
        }
    }
}
