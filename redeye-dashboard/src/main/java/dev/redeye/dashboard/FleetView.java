package dev.redeye.dashboard;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.redeye.CircuitBreaker;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fleet as one store holds it, kept in memory for every viewer at once: the dashboard's model. One feed
 * subscription for transitions as they happen, and one walk of the store's {@link OperationListing} (or one
 * {@code get} per named operation, for a store that cannot list) every refresh interval, for the counters that
 * change without a transition and for what the feed missed. Its store reads depend on the number of operations
 * and the interval only, never on the number of viewers: a viewer gets the snapshot held here and then the
 * changes, as JSON events ({@link Viewer}).
 *
 * <p>Only reads: nothing here writes the store but the operator's actions ({@link #act}), which go through the
 * engine ({@link CircuitBreaker#forceOpen}, {@link CircuitBreaker#forceHalfOpen}, {@link CircuitBreaker#reset})
 * as {@code redeye force-open} does.
 *
 * <p><b>Outages.</b> A refresh that fails marks the store down (the {@code store} event, with the reason), and
 * the next refresh that succeeds marks it up again; a gap of the feed (a dropped connection) makes the next
 * refresh run at once. A feed that cannot be subscribed to is retried at every refresh.
 *
 * <p>Thread-safe. Events are built under one lock, so that every viewer sees them in one order, and each viewer's
 * {@link Viewer#send} must not block (queue and return). {@link #close()} stops the refresh thread and the
 * subscription; it does not close the store.
 */
public final class FleetView implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FleetView.class);
    /** How long the timeline keeps a transition. */
    static final Duration TIMELINE_SPAN = Duration.ofHours(1);
    /** The most transitions the timeline keeps, whatever their age. */
    static final int TIMELINE_MAX = 10_000;
    /** The most operations a store without a listing is followed for (named and learned from the feed). */
    static final int MAX_FOLLOWED = 10_000;

    /** Receives the events of the view: the event name and its JSON. */
    @FunctionalInterface
    public interface Viewer {
        /**
         * Called under the view's lock, on the feed's or the refresh thread: must return at once.
         *
         * @param event {@code snapshot}, {@code tiles}, {@code transition}, {@code removed} or {@code store}
         * @param json  the event's data
         */
        void send(String event, String json);
    }

    /** An operator's action on an operation. */
    public enum Action {
        /** {@link CircuitBreaker#forceOpen}. */
        FORCE_OPEN("force-open"),
        /** {@link CircuitBreaker#forceHalfOpen}. */
        FORCE_HALF_OPEN("force-half-open"),
        /** {@link CircuitBreaker#reset}. */
        RESET("reset");

        private final String wireName;

        Action(String wireName) {
            this.wireName = wireName;
        }

        /** The name the page and the HTTP API use, for example {@code force-open}. */
        public String wireName() {
            return wireName;
        }

        /**
         * The action named {@code name}.
         *
         * @throws IllegalArgumentException for another name
         */
        public static Action of(String name) {
            for (Action a : values()) {
                if (a.wireName.equals(name)) {
                    return a;
                }
            }
            throw new IllegalArgumentException("unknown action '" + name + "' (expected force-open, "
                    + "force-half-open or reset)");
        }
    }

    /** One transition of the timeline. */
    public record TimelineEntry(long at, String operation, String kind, String from, String to, long version) {
    }

    /** Whether the store answers, and since when (epoch ms). */
    public record StoreStatus(boolean up, String message, long since) {
    }

    /** What the view knows of one operation, and when it learned it ({@link System#nanoTime()}). */
    private record Known(BreakerState state, String lastKind, Long lastAt, String lastTrial, long seenNanos) {
    }

    private final Store store;
    private final Policy policy;
    private final Duration refreshInterval;
    private final Clock clock;
    private final OperationListing listing;
    private final TransitionFeed feed;
    private final ObjectMapper json = new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);
    private final Map<String, Known> known = new ConcurrentHashMap<>();
    /** The tile each operation was last sent as (its status may change with time alone); under {@code this}. */
    private final Map<String, Tile> shown = new HashMap<>();
    /** The operations followed by get, for a store without a listing; under {@code this}. */
    private final Set<String> followed = new LinkedHashSet<>();
    private final ArrayDeque<TimelineEntry> timeline = new ArrayDeque<>();
    private final List<Viewer> viewers = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService refresher;
    private final AtomicBoolean refreshQueued = new AtomicBoolean();
    private final Object breakerLock = new Object();
    private volatile StoreStatus storeStatus;
    private volatile TransitionFeed.Subscription subscription;
    private volatile boolean closed;
    private CircuitBreaker breaker;

    /**
     * @param store           the store to show; not closed by {@link #close()}
     * @param policy          the application's policy: thresholds and timings to read the states with
     * @param operations      the operations to follow when the store cannot list them (ignored when it can)
     * @param refreshInterval how often the whole store is read again
     * @param clock           the clock statuses are computed at (epoch ms)
     * @throws IllegalArgumentException if the store can list nothing and no operation is named, or the interval is
     *                                  not positive
     * @throws NullPointerException     if an argument is null
     */
    public FleetView(Store store, Policy policy, Collection<String> operations, Duration refreshInterval,
            Clock clock) {
        this.store = Objects.requireNonNull(store, "store");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.refreshInterval = Objects.requireNonNull(refreshInterval, "refreshInterval");
        this.clock = Objects.requireNonNull(clock, "clock");
        if (refreshInterval.isZero() || refreshInterval.isNegative()) {
            throw new IllegalArgumentException("refreshInterval must be positive, was " + refreshInterval);
        }
        this.listing = store.capability(OperationListing.class).orElse(null);
        this.feed = store.capability(TransitionFeed.class).orElse(null);
        if (listing == null) {
            if (operations.isEmpty()) {
                throw new IllegalArgumentException("this store cannot list its operations (no OperationListing): "
                        + "name the operations to show");
            }
            followed.addAll(operations);
        }
        this.storeStatus = new StoreStatus(true, "", clock.millis());
        this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "redeye-dashboard-refresh");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Reads the store once (so that the first viewer sees it), subscribes to its feed, and starts the refresh
     * thread. A store that fails here is shown as down and read again at the next refresh.
     */
    public void start() {
        refreshNow();
        refresher.scheduleWithFixedDelay(this::refreshNow, refreshInterval.toMillis(), refreshInterval.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /** The policy states are read with. */
    public Policy policy() {
        return policy;
    }

    /** Whether the store answered its last read. */
    public StoreStatus storeStatus() {
        return storeStatus;
    }

    /** Every operation's tile, sorted by name, computed now. */
    public List<Tile> tiles() {
        long now = clock.millis();
        List<Tile> out = new ArrayList<>(known.size());
        known.forEach((op, k) -> out.add(tile(op, k, now)));
        out.sort(Comparator.comparing(Tile::operation));
        return out;
    }

    /** The transitions of the last hour, oldest first. */
    public synchronized List<TimelineEntry> timeline() {
        prune(clock.millis());
        return new ArrayList<>(timeline);
    }

    /**
     * Adds a viewer: it is sent the {@code snapshot} event at once, then every event after it, in order.
     *
     * @return a handle that removes it
     */
    public synchronized AutoCloseable join(Viewer viewer) {
        Objects.requireNonNull(viewer, "viewer");
        Map<String, Object> snap = new LinkedHashMap<>();
        snap.put("tiles", tiles());
        snap.put("timeline", timeline());
        snap.put("store", storeStatus);
        snap.put("now", clock.millis());
        viewer.send("snapshot", json(snap));
        viewers.add(viewer);
        return () -> viewers.remove(viewer);
    }

    /** The number of viewers joined. */
    public int viewers() {
        return viewers.size();
    }

    /**
     * Makes an operator's change through the engine, as {@code redeye force-open} and the others do; its
     * transition reaches every viewer through the feed (or the next refresh).
     *
     * @throws StoreException       if the store fails
     * @throws NullPointerException if an argument is null
     */
    public void act(Action action, String operation) {
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(operation, "operation");
        CircuitBreaker b = breaker();
        switch (action) {
            case FORCE_OPEN -> b.forceOpen(operation);
            case FORCE_HALF_OPEN -> b.forceHalfOpen(operation);
            case RESET -> b.reset(operation);
            default -> throw new IllegalStateException(action.name());
        }
        store.get(operation).ifPresent(s -> update(operation, s, null));
    }

    private CircuitBreaker breaker() {
        synchronized (breakerLock) {
            if (breaker == null) {
                breaker = CircuitBreaker.builder().store(store).closeStore(false)
                        .resetTimeout(policy.resetTimeout()).backoffMultiplier(policy.backoffMultiplier())
                        .maxResetTimeout(policy.maxResetTimeout()).build();
            }
            return breaker;
        }
    }

    /** Reads the whole store now and subscribes to the feed if not yet subscribed; on the refresh thread. */
    void refreshNow() {
        if (closed) {
            return;
        }
        refreshQueued.set(false);
        try {
            ensureSubscribed();
            long started = System.nanoTime();
            Map<String, BreakerState> read = readAll();
            applyRead(read, started);
            setStore(new StoreStatus(true, "", clock.millis()));
        } catch (StoreException | IllegalStateException e) {
            LOG.debug("dashboard refresh failed", e);
            setStore(new StoreStatus(false, String.valueOf(e.getMessage()), clock.millis()));
        } catch (RuntimeException e) {
            LOG.warn("dashboard refresh failed", e);
            setStore(new StoreStatus(false, e.toString(), clock.millis()));
        }
    }

    private void ensureSubscribed() {
        if (feed == null || subscription != null) {
            return;
        }
        subscription = feed.subscribe(this::onEvent, this::onGap);
    }

    /** Every state of the store: by listing, or by get of each followed operation. */
    private Map<String, BreakerState> readAll() {
        Map<String, BreakerState> out = new HashMap<>();
        if (listing != null) {
            String cursor = null;
            do {
                OperationListing.Page page = listing.page(cursor, OperationListing.MAX_LIMIT);
                for (OperationListing.Entry e : page.entries()) {
                    BreakerState s = e.state() != null ? e.state() : store.get(e.operation()).orElse(null);
                    if (s != null) {
                        out.put(e.operation(), s);
                    }
                }
                cursor = page.next();
            } while (cursor != null && !closed);
            return out;
        }
        List<String> ops;
        synchronized (this) {
            ops = new ArrayList<>(followed);
        }
        for (String op : ops) {
            store.get(op).ifPresent(s -> out.put(op, s));
        }
        return out;
    }

    /**
     * A whole read of the store, which began at {@code started}: it replaces what the view holds, but for a newer
     * version the feed brought while it ran (an older version read later is the store's truth: a restored
     * backup, a fail-over that lost writes).
     */
    private synchronized void applyRead(Map<String, BreakerState> read, long started) {
        long now = clock.millis();
        long seen = System.nanoTime();
        List<Tile> changed = new ArrayList<>();
        for (Map.Entry<String, BreakerState> e : read.entrySet()) {
            Known before = known.get(e.getKey());
            BreakerState s = e.getValue();
            if (before != null && before.state().version() > s.version() && before.seenNanos() - started > 0) {
                continue; // the feed brought a newer one while the read ran
            }
            Known after = before == null ? new Known(s, null, null, null, seen)
                    : new Known(s, before.lastKind(), before.lastAt(), before.lastTrial(), seen);
            known.put(e.getKey(), after);
            Tile t = tile(e.getKey(), after, now);
            Tile last = shown.get(e.getKey());
            if (last == null || !last.timeless().equals(t.timeless())) {
                changed.add(t);
                shown.put(e.getKey(), t);
            }
        }
        List<String> removed = new ArrayList<>();
        for (String op : new HashSet<>(known.keySet())) {
            if (!read.containsKey(op) && known.get(op).seenNanos() - started <= 0) {
                known.remove(op);
                shown.remove(op);
                removed.add(op);
            }
        }
        if (!changed.isEmpty()) {
            broadcast("tiles", changed);
        }
        if (!removed.isEmpty()) {
            broadcast("removed", removed);
        }
    }

    private void onEvent(TransitionEvent e) {
        if (closed) {
            return;
        }
        update(e.operation(), e.state(), e);
    }

    /** A state learned outside a refresh (the feed, an action); {@code e} is its transition, if any. */
    private synchronized void update(String operation, BreakerState s, TransitionEvent e) {
        Known before = known.get(operation);
        if (before != null && before.state().version() > s.version()) {
            return; // older than what is shown
        }
        long now = clock.millis();
        long seen = System.nanoTime();
        Known after;
        if (e == null) {
            if (before != null && before.state().equals(s)) {
                return;
            }
            after = before == null ? new Known(s, null, null, null, seen)
                    : new Known(s, before.lastKind(), before.lastAt(), before.lastTrial(), seen);
        } else {
            String trial = e.kind() == TransitionKind.CLOSED ? "success"
                    : e.kind() == TransitionKind.REOPENED ? "failure" : before == null ? null : before.lastTrial();
            after = new Known(s, e.kind().wireName(), now, trial, seen);
        }
        if (listing == null && !followed.contains(operation)) {
            if (followed.size() >= MAX_FOLLOWED) {
                return;
            }
            followed.add(operation);
        }
        known.put(operation, after);
        Tile t = tile(operation, after, now);
        shown.put(operation, t);
        if (e == null) {
            broadcast("tiles", List.of(t));
            return;
        }
        TimelineEntry entry = new TimelineEntry(now, operation, e.kind().wireName(), e.from().name(), e.to().name(),
                e.version());
        timeline.addLast(entry);
        prune(now);
        Map<String, Object> ev = new LinkedHashMap<>();
        ev.put("tile", t);
        ev.put("entry", entry);
        broadcast("transition", ev);
    }

    private void onGap() {
        if (closed || !refreshQueued.compareAndSet(false, true)) {
            return;
        }
        try {
            refresher.execute(this::refreshNow);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing
        }
    }

    private synchronized void setStore(StoreStatus s) {
        StoreStatus before = storeStatus;
        if (before.up() == s.up() && before.message().equals(s.message())) {
            return;
        }
        storeStatus = s;
        if (!s.up()) {
            LOG.warn("store unavailable: {}", s.message());
        } else {
            LOG.info("store available again");
        }
        broadcast("store", s);
    }

    private void prune(long now) {
        long oldest = now - TIMELINE_SPAN.toMillis();
        while (!timeline.isEmpty() && (timeline.size() > TIMELINE_MAX || timeline.peekFirst().at() < oldest)) {
            timeline.removeFirst();
        }
    }

    private Tile tile(String op, Known k, long now) {
        return Tile.of(op, k.state(), policy, now, k.lastKind(), k.lastAt(), k.lastTrial());
    }

    /** Under the lock: one serialization, sent to every viewer. */
    private void broadcast(String event, Object data) {
        if (viewers.isEmpty()) {
            return;
        }
        String text = json(data);
        for (Viewer v : viewers) {
            try {
                v.send(event, text);
            } catch (RuntimeException ex) {
                LOG.debug("a viewer failed; removing it", ex);
                viewers.remove(v);
            }
        }
    }

    /** {@code data} as JSON, written as the view's events are. */
    public String json(Object data) {
        try {
            return json.writeValueAsString(data);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write dashboard JSON", e);
        }
    }

    /** Stops the refresh thread and the feed subscription; the store stays open. Idempotent. */
    @Override
    public void close() {
        closed = true;
        refresher.shutdownNow();
        TransitionFeed.Subscription s = subscription;
        if (s != null) {
            s.close();
        }
        synchronized (breakerLock) {
            if (breaker != null) {
                breaker.close();
            }
        }
        viewers.clear();
    }
}
