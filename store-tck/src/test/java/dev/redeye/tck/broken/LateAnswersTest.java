package dev.redeye.tck.broken;

import static dev.redeye.tck.Rule.R1_11;
import static dev.redeye.tck.Rule.R4_8;

import dev.redeye.InMemoryStore;
import dev.redeye.api.Policy;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckRunner;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A correct store whose calls answer late, as any networked store's may on a loaded machine: the write is
 * applied (its ttl started) and the answer reaches the caller later. The real-time rules must not take the
 * late answer for the time of the write, else they judge a state that expired on time as a store defect.
 */
class LateAnswersTest {
    /** Longer than R1.11's stateTtl (500 ms) and R4.8's short claim (300 ms): expired when the answer arrives. */
    private static final long LATE_MILLIS = 600;

    /** The first atomic write of each key answers {@link #LATE_MILLIS} after the backend applied it. */
    private static final class FirstWriteAnswersLate extends ForwardingStore {
        private final Set<String> answered;

        FirstWriteAnswersLate(Store inner, Set<String> answered) {
            super(inner);
            this.answered = answered;
        }

        @Override
        StateChange written(String key, Policy policy, long now, StateChange change) {
            if (answered.add(key)) {
                try {
                    TimeUnit.MILLISECONDS.sleep(LATE_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return change;
        }
    }

    /** The first claim the store makes answers {@link #LATE_MILLIS} after the backend made it: one stall. */
    private static final class FirstClaimAnswersLate extends ForwardingStore {
        private final AtomicBoolean stalled;

        FirstClaimAnswersLate(Store inner, AtomicBoolean stalled) {
            super(inner);
            this.stalled = stalled;
        }

        @Override
        public Optional<String> claimTrial(String key, int permits, Duration ttl) {
            Optional<String> token = super.claimTrial(key, permits, ttl);
            if (token.isPresent() && stalled.compareAndSet(false, true)) {
                try {
                    TimeUnit.MILLISECONDS.sleep(LATE_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return token;
        }
    }

    @Test
    void aClaimAnsweredAfterItExpiredIsNotAnR4_8Failure() {
        try (InMemoryStore backing = new InMemoryStore()) {
            AtomicBoolean stalled = new AtomicBoolean();
            TckReport report = TckRunner.run(() -> new FirstClaimAnswersLate(backing.newClient(), stalled),
                    EnumSet.of(R4_8));
            BrokenStoresTest.assertPasses(report, R4_8);
        }
    }

    @Test
    void aWriteAnsweredAfterItsStateExpiredIsNotAnR1_11Failure() {
        try (InMemoryStore backing = new InMemoryStore()) {
            Set<String> answered = ConcurrentHashMap.newKeySet();
            TckReport report = TckRunner.run(() -> new FirstWriteAnswersLate(backing.newClient(), answered),
                    EnumSet.of(R1_11));
            BrokenStoresTest.assertPasses(report, R1_11);
        }
    }
}
