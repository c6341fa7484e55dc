package dev.redeye.store.hazelcast;

import com.hazelcast.client.Client;
import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.EntryEvent;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.LifecycleEvent;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryMergedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;
import com.hazelcast.partition.MigrationListener;
import com.hazelcast.partition.MigrationState;
import com.hazelcast.partition.ReplicaMigrationEvent;
import com.hazelcast.query.Predicates;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.support.FeedSubscribers;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link TransitionFeed} of one {@link HazelcastStore}: one entry listener on the state map (whatever the
 * number of subscribers), fanned out by {@link FeedSubscribers} on one feed thread of its own.
 *
 * <p><b>What arrives.</b> The listener is registered with a Hazelcast built-in predicate ({@code this LIKE
 * 'redeye-state/2 kind=%' OR this LIKE 'redeye-state/3 kind=%' OR this LIKE 'redeye-state/4 kind=%'}, every
 * state format), evaluated on the members, so only values written by a transition travel to this client: a
 * failing dependency's sub-threshold counting costs no event traffic. The event is rebuilt from the value alone
 * ({@link StateValues}). Hazelcast's event threads only enqueue; the feed thread decodes, orders and delivers, so
 * a slow subscriber never holds up Hazelcast.
 *
 * <p><b>Order and gaps.</b> Hazelcast delivers the events of one key in order; the feed keeps the last version
 * delivered per key (the 10,000 most recent keys) and drops an event that is not newer (a duplicate or a
 * straggler), so each subscriber sees a key's versions increase (R6.9). It forgets every version delivered
 * whenever it signals a gap (R6.12): what causes one (a member lost with writes its backup never had, a
 * split-brain merge) can make the map hold an earlier state again and issue a version already delivered,
 * and that event carries the map's current state. {@code onGap} runs when: an event's
 * version jumps by more than one (an event was lost; also the harmless first transition of a key's new life),
 * the client lost its cluster connection (at the disconnect, at the reconnect and once more two seconds later,
 * since Hazelcast re-registers listeners asynchronously after it reconnects), a member left the cluster (its
 * queued events are lost), a partition was lost or a migration failed, a split-brain merge touched the map, or
 * the feed's own queue overflowed.
 *
 * <p><b>Registration is per connection.</b> A smart client registers the listener on the members it is
 * connected to when {@link TransitionFeed#subscribe} runs; it connects to the others in the background (every
 * second) and registers there then. A client that just started may therefore miss the first events of some
 * partitions, and so may one whose cluster just gained a member. So the feed, when it starts on a client,
 * first waits up to three seconds for the client's connections to every member ({@link ClientConnections}),
 * and signals one more gap two seconds after it started on a client that still was not connected to every
 * member and after a member joined, so a subscriber that relies on the feed re-reads rather than trusting a view that may
 * have missed something. Hazelcast's public API does not report a dropped
 * connection to one member that stays in the cluster; events of its partitions sent before the client
 * reconnects are caught by the version check at the key's next event.
 */
final class HazelcastFeed {
    private static final Logger LOG = LoggerFactory.getLogger(HazelcastFeed.class);
    private static final AtomicLong THREADS = new AtomicLong();
    private static final int QUEUE = 10_000;
    private static final int TRACKED_KEYS = 10_000;
    private static final long SETTLE_MILLIS = 2_000;
    /** How long the first subscription of a client waits for its connections to every member. */
    private static final long CONNECT_WAIT_MILLIS = 3_000;
    private static final Object GAP = new Object();

    private final HazelcastInstance hz;
    private final IMap<String, Object> states;
    private final FeedSubscribers subscribers = new FeedSubscribers(
            (what, t) -> LOG.warn("redeye Hazelcast feed: {}", what, t));
    private final BlockingQueue<Object> queue = new ArrayBlockingQueue<>(QUEUE);
    private final AtomicBoolean overflowed = new AtomicBoolean();
    private final AtomicBoolean disconnected = new AtomicBoolean();
    private final AtomicLong settleGapAt = new AtomicLong(Long.MAX_VALUE);
    private final Map<String, Long> lastVersions = new LinkedHashMap<>(256, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > TRACKED_KEYS;
        }
    };
    private final List<Runnable> unregister = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;

    /**
     * Registers the listeners and starts the feed thread.
     *
     * @throws StoreException if a listener cannot be registered (everything registered so far is removed)
     */
    HazelcastFeed(HazelcastInstance hz, IMap<String, Object> states, String name) {
        this.hz = hz;
        this.states = states;
        boolean client = hz.getLocalEndpoint() instanceof Client;
        if (client) {
            // A smart client registers the listener on the members it is connected to now; right after it
            // started it may be connected to one member only. Waiting (bounded) for its background connections
            // first makes the subscription live for every partition when subscribe() returns (R6.9, R6.10).
            awaitConnectionsToAllMembers();
        }
        try {
            UUID entries = states.addEntryListener(new Entries(),
                    Predicates.or(Predicates.like("this", StateValues.TRANSITION_PREFIX + "%"),
                            Predicates.like("this", StateValues.BASE_TRANSITION_PREFIX + "%"),
                            Predicates.like("this", StateValues.QUORUM_TRANSITION_PREFIX + "%")), true);
            unregister.add(() -> states.removeEntryListener(entries));
            UUID lost = states.addPartitionLostListener(e -> gap("partition " + e.getPartitionId() + " was lost"));
            unregister.add(() -> states.removePartitionLostListener(lost));
            UUID membership = hz.getCluster().addMembershipListener(new Membership());
            unregister.add(() -> hz.getCluster().removeMembershipListener(membership));
            UUID lifecycle = hz.getLifecycleService().addLifecycleListener(this::lifecycle);
            unregister.add(() -> hz.getLifecycleService().removeLifecycleListener(lifecycle));
            if (client) {
                if (!ClientConnections.connectedToAllMembers(hz)) {
                    settleLater();
                }
            } else {
                UUID migration = hz.getPartitionService().addMigrationListener(new Migrations());
                unregister.add(() -> hz.getPartitionService().removeMigrationListener(migration));
            }
        } catch (RuntimeException e) {
            unregisterAll();
            throw new StoreException("cannot register the redeye feed listener on Hazelcast map '" + states.getName()
                    + "': " + e.getMessage(), e);
        }
        thread = new Thread(this::loop, "redeye-hazelcast-feed-" + THREADS.incrementAndGet() + "-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Polls, for at most {@link #CONNECT_WAIT_MILLIS}, until the client is connected to every member. */
    private void awaitConnectionsToAllMembers() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CONNECT_WAIT_MILLIS);
        while (!ClientConnections.connectedToAllMembers(hz) && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return; // register now; the settle gap below still covers what the connections miss
            }
        }
    }

    /** Adds a subscriber (see {@link TransitionFeed#subscribe}). */
    TransitionFeed.Subscription add(Consumer<TransitionEvent> listener, Runnable onGap) {
        return subscribers.add(listener, onGap);
    }

    /** Whether the feed thread is running (for monitoring and tests). */
    boolean isAlive() {
        return thread.isAlive();
    }

    /** Removes every listener from Hazelcast, ends every subscription and stops the thread (waiting up to 5 s). */
    void close() {
        running = false;
        unregisterAll();
        subscribers.clear();
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void unregisterAll() {
        for (Runnable r : unregister) {
            try {
                r.run();
            } catch (RuntimeException e) {
                // the instance may already be shut down, taking its registrations with it
                LOG.debug("removing a redeye feed listener from Hazelcast failed", e);
            }
        }
        unregister.clear();
    }

    // ------------------------------------------------------------------------------------ Hazelcast's threads

    private void enqueue(Object item) {
        if (running && !queue.offer(item)) {
            overflowed.set(true); // the feed thread signals the gap once it has room
        }
    }

    private void gap(String why) {
        LOG.debug("redeye Hazelcast feed on map '{}': gap ({})", states.getName(), why);
        enqueue(GAP);
    }

    /** Signals a gap {@link #SETTLE_MILLIS} from now, once the client has had time to register everywhere. */
    private void settleLater() {
        settleGapAt.set(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MILLIS));
    }

    private void lifecycle(LifecycleEvent e) {
        switch (e.getState()) {
            case CLIENT_DISCONNECTED:
                disconnected.set(true);
                gap("the client lost its cluster connection");
                break;
            case CLIENT_CONNECTED:
            case CLIENT_CHANGED_CLUSTER:
                if (disconnected.getAndSet(false) || e.getState() == LifecycleEvent.LifecycleState.CLIENT_CHANGED_CLUSTER) {
                    gap("the client reconnected");
                    settleLater();
                }
                break;
            default:
                break;
        }
    }

    private final class Entries implements EntryAddedListener<String, Object>, EntryUpdatedListener<String, Object>,
            EntryMergedListener<String, Object> {
        @Override
        public void entryAdded(EntryEvent<String, Object> event) {
            enqueue(event);
        }

        @Override
        public void entryUpdated(EntryEvent<String, Object> event) {
            enqueue(event);
        }

        @Override
        public void entryMerged(EntryEvent<String, Object> event) {
            gap("a split-brain merge wrote operation " + StateValues.where(event.getKey()));
        }
    }

    private final class Membership implements MembershipListener {
        @Override
        public void memberAdded(MembershipEvent membershipEvent) {
            settleLater(); // partitions migrate to the new member, which a client connects to in the background
        }

        @Override
        public void memberRemoved(MembershipEvent membershipEvent) {
            gap("member " + membershipEvent.getMember().getAddress() + " left the cluster");
        }
    }

    private final class Migrations implements MigrationListener {
        @Override
        public void migrationStarted(MigrationState state) {
        }

        @Override
        public void migrationFinished(MigrationState state) {
        }

        @Override
        public void replicaMigrationCompleted(ReplicaMigrationEvent event) {
        }

        @Override
        public void replicaMigrationFailed(ReplicaMigrationEvent event) {
            gap("the migration of partition " + event.getPartitionId() + " failed");
        }
    }

    // ------------------------------------------------------------------------------------------ feed thread

    private void loop() {
        while (running) {
            Object item;
            try {
                item = queue.poll(200, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                if (running) {
                    continue;
                }
                return;
            }
            if (overflowed.getAndSet(false)) {
                LOG.warn("redeye Hazelcast feed on map '{}': more than {} events waiting, some were dropped",
                        states.getName(), QUEUE);
                signalGap();
            }
            long settle = settleGapAt.get();
            if (settle != Long.MAX_VALUE && System.nanoTime() - settle >= 0 && settleGapAt.compareAndSet(settle, Long.MAX_VALUE)) {
                signalGap();
            }
            if (item == GAP) {
                signalGap();
            } else if (item != null) {
                @SuppressWarnings("unchecked")
                EntryEvent<String, Object> event = (EntryEvent<String, Object>) item;
                deliver(event);
            }
        }
    }

    private void deliver(EntryEvent<String, Object> e) {
        String key = e.getKey();
        TransitionEvent event;
        try {
            event = StateValues.decode(e.getValue(), StateValues.where(key)).event(key);
        } catch (StoreException malformed) {
            LOG.warn("redeye Hazelcast feed on map '{}': ignoring an event: {}", states.getName(), malformed.getMessage());
            return;
        }
        if (event == null) {
            return;
        }
        Long last = lastVersions.get(key);
        if (last != null && event.version() <= last) {
            return; // a duplicate or a straggler: subscribers see a key's versions in order
        }
        if (last != null && event.version() > last + 1) {
            signalGap(); // an event in between never arrived
        }
        lastVersions.put(key, event.version());
        subscribers.publish(event);
    }

    /** On the feed thread: forgets every version delivered, then runs every subscriber's {@code onGap}. */
    private void signalGap() {
        lastVersions.clear();
        subscribers.signalGap();
    }

    @Override
    public String toString() {
        return "HazelcastFeed[map=" + states.getName() + ", subscribers=" + subscribers.size() + ", instance="
                + hz.getName() + "]";
    }
}
