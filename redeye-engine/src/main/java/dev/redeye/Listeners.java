package dev.redeye;

import dev.redeye.api.TransitionEvent;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The builder's event listeners ({@code onCallRejected}, {@code onIgnoredError}, {@code onFleetStateChange},
 * {@code onOutlier}) as
 * one observer, so that they are dispatched, guarded and logged like any other {@link CircuitBreakerObserver}:
 * a listener that throws is logged and never reaches the call.
 */
final class Listeners implements CircuitBreakerObserver {
    private final BiConsumer<String, RuntimeException> rejected;
    private final BiConsumer<String, Throwable> ignored;
    private final Consumer<TransitionEvent> fleet;
    private final Consumer<Outlier> outliers;

    private Listeners(CircuitBreakerConfig c) {
        this.rejected = c.onCallRejected().orElse(null);
        this.ignored = c.onIgnoredError().orElse(null);
        this.fleet = c.onFleetStateChange().orElse(null);
        this.outliers = c.onOutlier().orElse(null);
    }

    /** The listeners of {@code config}, or null when it sets none. */
    static Listeners of(CircuitBreakerConfig config) {
        Listeners l = new Listeners(config);
        return l.rejected == null && l.ignored == null && l.fleet == null && l.outliers == null ? null : l;
    }

    @Override
    public void callRejected(ObservedOperation operation, RuntimeException rejection) {
        if (rejected != null) {
            rejected.accept(operation.name(), rejection);
        }
    }

    @Override
    public void errorIgnored(ObservedOperation operation, Throwable error) {
        if (ignored != null) {
            ignored.accept(operation.name(), error);
        }
    }

    @Override
    public void feedEvent(TransitionEvent event) {
        if (fleet != null) {
            fleet.accept(event);
        }
    }

    @Override
    public void outlier(Outlier outlier) {
        if (outliers != null) {
            outliers.accept(outlier);
        }
    }

    @Override
    public String toString() {
        return "the builder's listeners (onCallRejected, onIgnoredError, onFleetStateChange, onOutlier)";
    }
}
