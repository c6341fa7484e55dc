package dev.redeye.spring.boot.actuate;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerObserver;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A bounded buffer of the transitions this application saw, for the {@code redeyeevents} endpoint
 * ({@link RedeyeEventsEndpoint}): this instance's own (a breaker's {@code stateChanged}, the same events as its
 * {@code onStateChange}) and the fleet's (each breaker's store feed, the events of {@code onFleetStateChange}:
 * other instances' transitions, and operations this instance never called).
 *
 * <ul>
 * <li>One entry per transition: a transition is known by its operation and version, so this instance's own
 * transition, which comes back on the feed too, is kept once, as {@code local}, whichever copy came first; the
 * feed's copy seen by several breakers over one store is kept once.</li>
 * <li>The oldest entries go once {@code capacity} is reached ({@code redeye.events.buffer-size}, 100 by
 * default). The buffer is this process's memory: it starts empty at each start and holds what happened since.</li>
 * <li>Each entry names the breaker that holds the operation on this instance, or none for an operation it never
 * called.</li>
 * </ul>
 *
 * Registering subscribes each breaker to its store's transition feed (see {@link CircuitBreakerObserver}). Adding
 * an entry costs a scan of the buffer under a lock; transitions are rare, calls never pay for it. Thread-safe.
 */
public final class RedeyeEvents implements AutoCloseable {
    /** Where an event came from. */
    public enum Origin {
        /** A transition this instance's own write made. */
        LOCAL,
        /** A transition seen on the store's feed: another instance's, or this one's before its own report. */
        FLEET
    }

    /**
     * One transition.
     *
     * @param breaker   the breaker holding the operation on this instance, or null if none does
     * @param operation the operation
     * @param origin    this instance's or the fleet's
     * @param kind      the transition's kind ({@code opened}, {@code reopened}, {@code closed},
     *                  {@code forced_open}, {@code forced_half_open}, {@code forced_closed})
     * @param from      the status before
     * @param to        the status after
     * @param version   the state's version after the transition
     * @param failures  the failure count the state holds after it
     * @param seenAt    when this instance saw it (its wall clock)
     */
    public record Event(String breaker, String operation, Origin origin, String kind, BreakerStatus from,
            BreakerStatus to, long version, int failures, Instant seenAt) {
    }

    private final RedeyeCircuitBreakers breakers;
    private final int capacity;
    private final Clock clock;
    private final List<Event> events = new ArrayList<>();
    private final List<Map.Entry<CircuitBreaker, CircuitBreakerObserver>> registered = new ArrayList<>();

    /**
     * Registers an observer on each of {@code breakers}.
     *
     * @throws IllegalArgumentException if {@code capacity} is below 1
     */
    public RedeyeEvents(RedeyeCircuitBreakers breakers, int capacity, Clock clock) {
        if (capacity < 1) {
            throw new IllegalArgumentException("redeye.events.buffer-size must be at least 1, was " + capacity);
        }
        this.breakers = Objects.requireNonNull(breakers, "breakers");
        this.capacity = capacity;
        this.clock = Objects.requireNonNull(clock, "clock");
        for (Map.Entry<String, CircuitBreaker> b : breakers.asMap().entrySet()) {
            String name = b.getKey();
            CircuitBreakerObserver o = new CircuitBreakerObserver() {
                @Override
                public void stateChanged(TransitionEvent event) {
                    add(name, event, Origin.LOCAL);
                }

                @Override
                public void feedEvent(TransitionEvent event) {
                    add(b.getValue().localState(event.operation()).isPresent() ? name : null, event, Origin.FLEET);
                }

                @Override
                public String toString() {
                    return "the redeyeevents buffer";
                }
            };
            b.getValue().addObserver(o);
            registered.add(Map.entry(b.getValue(), o));
        }
    }

    private void add(String breaker, TransitionEvent e, Origin origin) {
        String holder = breaker != null ? breaker : holderOf(e.operation());
        synchronized (events) {
            for (int i = 0; i < events.size(); i++) {
                Event known = events.get(i);
                if (known.version() == e.version() && known.operation().equals(e.operation())) {
                    if (origin == Origin.LOCAL && known.origin() == Origin.FLEET
                            || known.breaker() == null && holder != null) {
                        events.set(i, new Event(holder, known.operation(),
                                origin == Origin.LOCAL ? Origin.LOCAL : known.origin(), known.kind(), known.from(),
                                known.to(), known.version(), known.failures(), known.seenAt()));
                    }
                    return;
                }
            }
            if (events.size() == capacity) {
                events.remove(0);
            }
            events.add(new Event(holder, e.operation(), origin, e.kind().wireName(), e.from(), e.to(), e.version(),
                    e.state().failures(), clock.instant()));
        }
    }

    /** The breaker that holds {@code operation} on this instance, or null. */
    private String holderOf(String operation) {
        for (Map.Entry<String, CircuitBreaker> b : breakers.asMap().entrySet()) {
            if (b.getValue().localState(operation).isPresent()) {
                return b.getKey();
            }
        }
        return null;
    }

    /** Every buffered event, oldest first. */
    public List<Event> events() {
        synchronized (events) {
            return List.copyOf(events);
        }
    }

    /** The buffered events of {@code operation}, oldest first. */
    public List<Event> events(String operation) {
        synchronized (events) {
            return events.stream().filter(e -> e.operation().equals(operation)).toList();
        }
    }

    /** Unregisters from every breaker. Idempotent. */
    @Override
    public void close() {
        synchronized (registered) {
            for (Map.Entry<CircuitBreaker, CircuitBreakerObserver> r : registered) {
                try {
                    r.getKey().removeObserver(r.getValue());
                } catch (RuntimeException closedAlready) {
                    // the breaker is closed: it holds no observer any longer
                }
            }
            registered.clear();
        }
    }
}
