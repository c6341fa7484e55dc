package dev.redeye;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.Store;
import dev.redeye.spi.Transitions;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The bodies of {@link CircuitBreaker}'s manual and read-only API: its state and status (from the store, or
 * as this instance knows them), {@code check}, the manual changes ({@code forceOpen}, {@code forceHalfOpen},
 * {@code reset}, {@code forceMode}), the manual outcomes ({@code recordSuccess}, {@code recordFailure}) and {@code allMetrics}.
 * Each one's contract is on the public method of {@link CircuitBreaker}; an {@link OperationState} it is given
 * comes from {@link BreakerParts#entry}, which checked the name and that the breaker is not closed. Every
 * store call whose result the views learn goes through {@link StateViews#stamped}. Thread-safe (stateless
 * over the thread-safe parts).
 */
final class ManualControl {
    private final BreakerParts p;
    private final StateViews.StoreCall<BreakerState> read;

    ManualControl(BreakerParts parts) {
        this.p = parts;
        this.read = (e, now) -> parts.access.get(e.name);
    }

    BreakerState state(OperationState e) {
        if (p.local != null) {
            BreakerState s = p.local.current(e.name);
            return s == null ? BreakerState.INITIAL : s;
        }
        p.recorder.flush(e); // this instance's batched outcomes are in what it reads
        return p.views.readNoted(e, p.time.nanos(), read);
    }

    BreakerStatus status(OperationState e) {
        BreakerState s = state(e);
        return p.views.status(e.name, p.operations.peek(e.name), s, p.clock.millis(), p.time.nanos());
    }

    boolean check(OperationState e) {
        BreakerStatus s;
        try {
            s = status(e);
        } catch (StoreException ex) {
            p.errors.report(e, ex);
            return p.config.storeErrorPolicy() != StoreErrorPolicy.REJECT;
        }
        return s == BreakerStatus.CLOSED || s == BreakerStatus.HALF_OPEN;
    }

    /**
     * A manual change: skipped when its target is in force already ({@link Transitions#inForce}), and then the
     * read is what the views learn; otherwise the write is.
     */
    void force(OperationState e, BreakerStatus target) {
        p.recorder.flush(e);
        long now = p.clock.millis();
        long tick = p.time.nanos();
        BreakerState current = p.views.stamped(e, now, tick, read, (x, s, n, t, stampBefore) -> {
            if (Transitions.inForce(s, target, p.policy, n)) {
                p.views.noteRead(x, s, t, stampBefore);
            }
        });
        if (Transitions.inForce(current, target, p.policy, now)) {
            return;
        }
        p.recorder.write(e, now, tick, (x, n) -> p.access.force(x.name, target, p.policy, n));
    }

    /**
     * An operator's mode: skipped when it is stored already on a closed, clean state
     * ({@link Transitions#inForce(BreakerState, BreakerMode)}), as {@link #force} is.
     */
    void forceMode(OperationState e, BreakerMode mode) {
        p.recorder.flush(e);
        long now = p.clock.millis();
        long tick = p.time.nanos();
        BreakerState current = p.views.stamped(e, now, tick, read, (x, s, n, t, stampBefore) -> {
            if (Transitions.inForce(s, mode)) {
                p.views.noteRead(x, s, t, stampBefore);
            }
        });
        if (Transitions.inForce(current, mode)) {
            return;
        }
        AtomicOperation op = AtomicOperation.forceMode(mode);
        p.recorder.write(e, now, tick, (x, n) -> p.access.update(x.name, op, p.policy, n));
    }

    void record(OperationState e, boolean success) {
        p.recorder.flush(e);
        p.recorder.write(e, p.clock.millis(), p.time.nanos(), p.recorder.recordCall(success));
    }

    Optional<BreakerState> localState(String operation) {
        OperationState e = p.operations.peek(Objects.requireNonNull(operation, "operation"));
        if (p.local != null) {
            BreakerState s;
            try {
                s = p.local.current(operation);
            } catch (StoreException closedMeanwhile) {
                return Optional.empty();
            }
            return Optional.ofNullable(s != null ? s : e != null ? BreakerState.INITIAL : null);
        }
        return e == null ? Optional.empty() : Optional.ofNullable(StateViews.known(e));
    }

    BreakerStatus localStatus(String operation) {
        BreakerState s = localState(operation).orElse(BreakerState.INITIAL);
        return p.views.status(operation, p.operations.peek(operation), s, p.clock.millis(), p.time.nanos());
    }

    Map<String, Metrics> allMetrics() {
        Map<String, Metrics> out = new TreeMap<>();
        for (OperationState e : p.operations.all()) {
            out.put(e.name, e.metrics());
        }
        return Collections.unmodifiableMap(out);
    }

    /** The stored state, without registering the operation. */
    Optional<BreakerState> storedState(String operation) {
        OperationNames.requireValid(operation);
        if (p.closed.get()) {
            throw new IllegalStateException("circuit breaker is closed");
        }
        if (p.local != null) {
            return Optional.ofNullable(p.local.current(operation));
        }
        OperationState held = p.operations.peek(operation);
        if (held != null) {
            p.recorder.flush(held);
        }
        Store real = p.config.store().orElseThrow();
        try {
            return Objects.requireNonNull(real.get(operation), "the store answered get with null");
        } catch (Throwable e) { // also a checked exception a driver threw sneakily, or a LinkageError
            throw StoreAccess.storeError("get", e);
        }
    }
}
