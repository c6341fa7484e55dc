package dev.redeye.spi;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;

/**
 * Capability: every change of a breaker's state as one atomic read-modify-write where the data lives,
 * applying the {@link Transitions} rules exactly. With it failures are never lost between instances, exactly
 * one caller observes each transition, trial outcomes are fenced by the open period they were admitted under,
 * and an operator's change is never lost to a concurrent one.
 *
 * <p>A store implements {@link #apply} once, whatever the rule: read the key's state (or its new-life state
 * {@link BreakerState#initial(long)} if absent), {@link AtomicOperation#apply(BreakerState, Policy, long)},
 * write the result if it changed (refreshing the state's ttl unless it is forced), remove the key's trial
 * claims if {@link AtomicOperation#removesClaims()}, and publish the event of a transition to the
 * {@link TransitionFeed}, all as one atomic step (a row lock, a conditional-write loop, an entry processor, a
 * script, a monitor). A store that cannot run Java where its data lives names the rule with
 * {@link AtomicOperation.Kind#wireName()} and implements each rule there. A new strategy is a new
 * {@link AtomicOperation}, never a new method here.
 *
 * <p>{@code now} is passed in by the caller; a store never reads its own clock for a rule.
 */
public interface AtomicUpdates {

    /**
     * Atomically applies {@code operation} to the stored state of {@code key}. A trial outcome for an open
     * period other than the current one, and a success with nothing to reset, change nothing and write
     * nothing; a forced change is always a transition and bumps the version by exactly one.
     *
     * @return the state before and after, and the transition if there was one
     * @throws StoreException       if the backend fails or the stored data is malformed
     * @throws NullPointerException if {@code operation} or {@code policy} is null
     */
    StateChange apply(String key, AtomicOperation operation, Policy policy, long now);
}
