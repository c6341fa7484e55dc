package dev.redeye.tck;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * The numbered rule list of the redeye store TCK: the one reference for what every rule promises and what to
 * check when it fails. Ids are stable: a test method of {@link StoreTck} starts with the id in lower case
 * ({@code R2.7} is {@code r2_7_...}); a retired id is never reused.
 *
 * <p>Group R0 is the TCK's own (the store declares what the implementer expects); R1 is required of every
 * store, except R1.10 to R1.12, which make transitions and so run when the store declares
 * {@code AtomicUpdates}; R2 to R6 run when the store declares the capability
 * the group needs and are reported skipped with the reason otherwise (a group never needs a second
 * capability, but for R5.11, which also needs {@code TrialClaims}: R6 makes its transitions with whatever the
 * store offers, puts included); R7 runs the engine
 * ({@code dev.redeye.CircuitBreaker}) over the store; R8 checks the store against a reference model on random
 * scenarios (R8.1, R8.3 and R8.4 use whatever the store declares, so they run for every store; R8.2 and R8.5
 * need {@code TrialClaims}); R9 holds {@code AtomicUpdates} to the leaky strategy (R9.7 through the engine, for
 * every store); R10 to R12 hold it to sliding windows, slow calls and modes (R12.2 also needs {@code TrialClaims},
 * R12.3 {@code TransitionFeed}; R12.4 puts a state in a mode on every store); R13 holds it, with
 * {@code QuorumState}, to quorum opening; R14, with {@code OutcomeBatches}, to batches of outcomes;
 * R15 holds {@code OperationListing} to listing operations.
 */
public enum Rule {
    R0_1("R0.1", "The store declares every capability the implementer expects (expectedCapabilities()); a "
            + "store that declares no optional capability passes only when the implementer expects none.",
            "capability(Class) of the store: it must return the capability for every expected type, so that a "
                    + "store cannot silently skip a whole group; a store meant to be plain says so with an "
                    + "empty expectedCapabilities() (or redeye.tck.expect=none, redeye tck --expect none)"),

    R1_1("R1.1", "get of a key never written returns empty.",
            "get: it must return Optional.empty() (never null, never an INITIAL state) for a missing key"),
    R1_2("R1.2", "put then get from the other client returns every field of BreakerState exactly "
            + "(doubles bit-exact, version included).",
            "put and get, and the stored layout (StateCodec): every field written and read, errorRate written "
                    + "with a format that round-trips (Double.toString or %.17g), longs not squeezed through 32-bit "
                    + "ints"),
    R1_3("R1.3", "put overwrites; the last put wins.",
            "put: it must replace the whole stored state, not merge or keep the first value"),
    R1_4("R1.4", "delete removes the state and every trial claim of the key; deleting an unknown key is a no-op.",
            "delete: it must also remove the claim entries of the key (and throw nothing for a missing key)"),
    R1_5("R1.5", "Hostile keys round-trip and stay distinct: braces, quotes, SQL, spaces, newline, 10 KB, "
            + "non-BMP unicode, and pairs a naive prefix scheme confuses (a vs a:trial, a} vs {a).",
            "the key mapping shared by get, put, delete and claimTrial (escaping, hashing): bind keys as "
                    + "parameters, never concatenate them into scripts or SQL; make the claim namespace impossible to "
                    + "collide with a state key; support long keys (hash them)"),
    R1_6("R1.6", "One store instance serves many keys with different policies at once.",
            "recordFailure (and every atomic method): use the Policy argument of each call; no policy cached per "
                    + "store instance"),
    R1_7("R1.7", "Malformed data under a key makes get (and recording, if offered) throw StoreException.",
            "get and recordFailure, where they decode stored data: catch parse errors and wrap them in "
                    + "StoreException; never reset a key silently and never leak the backend's exception type"),
    R1_8("R1.8", "After close(), every method fails fast with StoreException instead of hanging; close() twice "
            + "is harmless.",
            "close() and the start of every method: a closed flag checked first, close() idempotent"),
    R1_9("R1.9", "(real time) A forced state is never expired: put of a forced state with a 300 ms ttl is still "
            + "readable, forced, 800 ms later.",
            "put must store a forced state (forced = true) without expiry, whatever ttl it is given: while forced "
                    + "every call is rejected, nothing refreshes the ttl, and an expired key would silently close "
                    + "a breaker an operator holds open"),
    R1_10("R1.10", "(real time) Versions of a key never go backwards: after delete, and after the backend "
            + "expired the state (short stateTtl), the next transition's version is higher than any the key had "
            + "before.",
            "the version an atomic operation starts from when the key is absent: BreakerState.initial(base) with "
                    + "a base above every earlier version (the backend clock in microseconds, or a remembered "
                    + "tombstone or floor), never BreakerState.INITIAL after the key had a life"),
    R1_11("R1.11", "(real time) An atomic write refreshes the state's ttl (stateTtl); a state not written again "
            + "expires after stateTtl.",
            "the expiry set by atomic operations: the policy's stateTtl on every write that writes (PEXPIRE, "
                    + "expires_at), measured from that write, not from the key's creation; and that it is set at all"),
    R1_12("R1.12", "(real time) A new life of a key starts above every version the key had: after the backend "
            + "expired its state, and after delete, the first atomic call that writes reports the previous state "
            + "BreakerState.initial(v) with v above the expired or deleted version, so a write that is not a "
            + "transition can never carry the version of the state it replaced.",
            "the version base of an absent key (a tombstone, a floor, an expired row still present): the last "
                    + "version + 1, never the last version itself (max(clock, version) is at the version when the "
                    + "clock is behind it); a write of the new life with the old version would look like the old "
                    + "state to every cache that holds it"),

    R2_1("R2.1", "A failure on an unknown key gives failures = 1, lastFailureAt = now, closed, and the store's "
            + "starting version for a new life of the key (previous = BreakerState.initial(v)), the state a later "
            + "get returns.",
            "recordFailure must start from BreakerState.initial(base) (every counter 0; base 0 or the store's "
                    + "version base), use the now argument rather than the store's clock, and not bump the version"),
    R2_2("R2.2", "Failures accumulate; the one that reaches failureThreshold opens the breaker with "
            + "openedAt = now, version + 1, and reports a transition.",
            "recordFailure: the threshold comparison (>=), openedAt = now, the version bump and the OPENED kind "
                    + "in the result"),
    R2_3("R2.3", "A sub-threshold increment does not change version and reports no transition.",
            "recordFailure: only transitions bump version; a plain increment returns a StateChange with a null "
                    + "transition"),
    R2_4("R2.4", "A failure while open adds to failures and sets lastFailureAt, but leaves openedAt and version "
            + "unchanged.",
            "recordFailure, its open branch: it must not reopen (no openedAt move, no version bump)"),
    R2_5("R2.5", "With maxGapBetweenFailures, a failure later than the gap after the previous one restarts the "
            + "count at 1; within the gap it adds.",
            "recordFailure: the gap comparison (now - lastFailureAt > gap) using the now argument"),
    R2_6("R2.6", "A success with nothing to clear changes nothing and reports no transition (also on an unknown "
            + "key, which stays unknown).",
            "recordSuccess (and recordOutcome with success) when failures = 0: nothing may be written, created "
                    + "or bumped"),
    R2_7("R2.7", "8 threads over 2 clients record 4,000 failures under a threshold never reached: the stored count "
            + "is exactly 4,000.",
            "recordFailure must be one atomic read-modify-write in the store (script, row lock, conditional "
                    + "write retry); a get-then-put loses updates"),
    R2_8("R2.8", "8 threads over 2 clients race past failureThreshold = 100: exactly one call reports the opening "
            + "transition and version rises by exactly 1.",
            "atomicity of recordFailure: the transition must be decided inside the same atomic step as the "
                    + "increment"),
    R2_9("R2.9", "The result of every call equals Transitions applied to the prior state, for a scripted "
            + "sequence of 50 mixed calls.",
            "recordFailure, recordSuccess or recordOutcome, whichever the failing step in the message names: "
                    + "parity with dev.redeye.spi.Transitions (a native script must express exactly the same rules)"),
    R2_10("R2.10", "A success that clears sub-threshold failures stores failures = 0 with the same version, "
            + "reports no transition and publishes no event.",
            "recordSuccess with failures > 0: a write, not a transition (contract v2; v1's CLEARED is retired): "
                    + "no version bump, no feed event"),

    R3_1("R3.1", "A fixed sequence of 50 outcomes yields the same errorRate (within 1e-9) and samples as "
            + "Transitions.",
            "recordOutcome: the EWMA formula samples == 0 ? x : decay * rate + (1 - decay) * x, and the samples "
                    + "increment"),
    R3_2("R3.2", "The breaker opens only once samples >= minimumCalls and errorRate >= errorRateThreshold; the "
            + "opening is a transition.",
            "recordOutcome: both opening conditions of the error-rate strategy and the OPENED transition"),
    R3_3("R3.3", "8 threads over 2 clients record 2,000 outcomes: samples is exactly 2,000.",
            "recordOutcome, and the recordFailure / recordSuccess it may delegate to: each must be one atomic "
                    + "read-modify-write in the store (the message names the counts that were lost)"),
    R3_4("R3.4", "A repeating pattern of 4 failures in 5 calls opens the breaker (decay 0.9, minimumCalls 10, "
            + "threshold 0.5), where no run of failureThreshold consecutive failures occurs.",
            "recordOutcome: it must honour Policy.strategy() = ERROR_RATE rather than always count consecutively"),

    R4_1("R4.1", "With permits = 1, the first claim returns a token and a second claim returns empty.",
            "claimTrial: it must count live claims and refuse when permits are taken (create-if-fewer-than)"),
    R4_2("R4.2", "Tokens are unique across calls and clients.",
            "claimTrial, its token: a random UUID (or equivalent) per call, never a per-client counter"),
    R4_3("R4.3", "With permits = 3, exactly three claims succeed.",
            "claimTrial: the live-claim count compared with permits"),
    R4_4("R4.4", "32 callers over 2 clients race to claim: exactly permits winners, for permits 1 and 3.",
            "claimTrial: the count check and the insert must be one atomic step (script, SET NX, conditional "
                    + "write, lock)"),
    R4_5("R4.5", "Releasing with the winning token frees that permit.",
            "releaseTrial: it must delete the claim entry whose token matches"),
    R4_6("R4.6", "Releasing with a wrong or stale token is a no-op and never frees another caller's claim.",
            "releaseTrial: compare-and-delete by token, never an unconditional delete of the key's claims"),
    R4_7("R4.7", "Releasing an unknown key or an expired token is a no-op and throws nothing.",
            "releaseTrial: on missing data it must return quietly"),
    R4_8("R4.8", "(real time) A claim expires after its ttl and the key can be claimed again; the expired "
            + "holder's late release does not delete the new claim.",
            "claimTrial, the ttl it sets (PX, expiry attribute, TTL), and releaseTrial's compare-and-delete"),
    R4_9("R4.9", "Claims of different keys are independent.",
            "claimTrial and releaseTrial: the claim namespace per key; a token must only release a claim of its "
                    + "own key"),
    R4_10("R4.10", "(real time) Claims in the engine's ttl range expire on time: claims of 1.5 s (1 permit) and "
            + "10 s (2 permits), made together, keep their permits until their ttl (never more than 5 ms early) and "
            + "free them within 100 ms after it.",
            "claimTrial, the ttl it sets for long claims: the expiry must be the claim's own ttl in ms (PX, an "
                    + "expiry timestamp, a TTL attribute compared in the claim's condition), not a fixed or rounded "
                    + "one, and an expired claim must never count; a trial winner that dies must not hold the "
                    + "fleet open"),
    R4_11("R4.11", "(real time) Expired claims never block a claim: after 20 claims under permits = 20 expired, "
            + "the first claim with permits = 1 succeeds, and the next is refused.",
            "claimTrial's count of live claims: every expired claim must be ignored or pruned, however many there "
                    + "are (a prune bounded per request must make progress across retries, or the count must "
                    + "exclude what it did not prune)"),

    R5_1("R5.1", "A trial success with successThreshold = 1 closes: not open, failures, openCount, errorRate, "
            + "samples, trialSuccesses reset, version + 1.",
            "trialSucceeded: it must apply Transitions.closedFrom (every counter reset) and bump version"),
    R5_2("R5.2", "With successThreshold = 3, the first two trial successes raise trialSuccesses with no "
            + "transition; the third closes.",
            "trialSucceeded: the trialSuccesses counter and the successThreshold comparison"),
    R5_3("R5.3", "A trial failure reopens: openedAt = now, openCount + 1, failures >= failureThreshold, "
            + "lastFailureAt = now, trialSuccesses = 0, version + 1.",
            "trialFailed: every field of the reopened state, and use of the now argument"),
    R5_4("R5.4", "openCount grows across consecutive failed trials and returns to 0 when the breaker closes.",
            "trialFailed, its openCount increment, and trialSucceeded, its reset on close (it drives backoff)"),
    R5_5("R5.5", "Forcing OPEN (held, no trials), HALF_OPEN and CLOSED each read back with the forced status and "
            + "version + 1.",
            "force: the forced flag for OPEN, openedAt = now - 2 * maxResetTimeout for HALF_OPEN, full reset "
                    + "and claim removal for CLOSED"),
    R5_6("R5.6", "Concurrent trial outcomes from 2 clients are linearizable: version rises by exactly the number "
            + "of transitions reported, and the final state is one a serial order produces.",
            "trialSucceeded and trialFailed: each must be one atomic read-modify-write"),
    R5_7("R5.7", "(real time) A state forced open through force(), and then written again while forced, is still "
            + "forced 800 ms later although the policy's stateTtl is 300 ms.",
            "force and recordFailure: an atomic operation whose resulting state is forced must store it without "
                    + "expiry (no PEXPIRE / NULL expiry), and only apply the policy's stateTtl again once the state "
                    + "is no longer forced"),
    R5_8("R5.8", "Trial fencing: an outcome carrying the version of an earlier open period is a no-op that "
            + "returns the current state; a late success never closes a breaker that reopened since.",
            "trialSucceeded / trialFailed must apply only when the stored state is open, not forced and still at "
                    + "trialVersion (Transitions.isCurrentTrialPeriod), inside the atomic step"),
    R5_9("R5.9", "With halfOpenPermits 3, three failing trials of one period (racing over 2 clients) reopen the "
            + "breaker once: openCount + 1 and version + 1 in total.",
            "trialFailed, its fencing: the first failure moves the version, so the others carry a stale one and "
                    + "must change nothing"),
    R5_10("R5.10", "trialSuccesses restarts at 0 in every new open period (after a failed trial, a forced "
            + "half-open, a new opening).",
            "trialFailed and force (and recordFailure when it opens): every transition into an open period sets "
                    + "trialSuccesses = 0"),
    R5_11("R5.11", "Forcing HALF_OPEN removes every live claim of the key (one permit and several), and no claim "
            + "of another key; the new period's claims then succeed at once. Needs TrialClaims too.",
            "force HALF_OPEN: like force CLOSED it must delete the key's claims in the same step "
                    + "(AtomicOperation.removesClaims()), or a hung trial of the old period holds the forced one "
                    + "for its whole ttl"),

    R6_1("R6.1", "A transition produces one event carrying the operation name, the new state and its version.",
            "publication of every transition (inside or right after the atomic write) with the full state; a "
                    + "store without both atomic capabilities also publishes every put that raises the version "
                    + "(TransitionFeed, TransitionEvent.ofPut)"),
    R6_2("R6.2", "Sub-threshold increments and no-op successes produce no event.",
            "the atomic methods' publication: publish only when the StateChange is a transition"),
    R6_3("R6.3", "Three subscribers on one client and one on the other client each receive the event.",
            "subscribe: fan-out of one shared stream to every subscriber of every store instance"),
    R6_4("R6.4", "Unsubscribing stops delivery to that subscriber only.",
            "Subscription.close (of the Subscription subscribe returned): it must remove only its own listener"),
    R6_5("R6.5", "Events name hostile operation names exactly.",
            "the publication of events: the operation name in the event payload (StateCodec.eventToLine / "
                    + "eventToFields)"),
    R6_6("R6.6", "The event's version equals the stored version after the transition.",
            "the publication of events: an event must carry the state that was written, not a re-read or a "
                    + "pre-image"),
    R6_7("R6.7", "close() ends every subscription and frees its threads and connections.",
            "close() must stop feed threads (interrupt, shut down executors) and end the feed connection"),
    R6_8("R6.8", "After the feed connection is cut (interruptFeed hook), onGap fires and later transitions are "
            + "delivered again.",
            "subscribe's reader: reconnection with backoff and the onGap callback on every drop"),
    R6_9("R6.9", "Events of one key reach each subscriber in version order, also while two clients make "
            + "transitions of the key concurrently.",
            "publication order: publish inside the atomic step, or drop late events older than one already "
                    + "delivered (FeedSubscribers.inVersionOrder)"),
    R6_10("R6.10", "(real time) After a subscription is live, every transition made through the other client is "
            + "delivered within 1 s: a silent or slow feed fails.",
            "that the feed delivers at all and promptly: the subscription's connection, its reader thread, and "
                    + "the publication of every transition (for a store without both atomic capabilities, of "
                    + "every put that raises the version); the engine's polling must not be what hides a silent feed"),
    R6_11("R6.11", "Every TransitionKind produces exactly one event, with the kind, the version and the state "
            + "written: OPENED, REOPENED (a failed trial), CLOSED (a successful trial), FORCED_OPEN, "
            + "FORCED_HALF_OPEN and FORCED_CLOSED, each made with the store's own atomic call (or the put the "
            + "engine writes when the store lacks it).",
            "the publication of each kind: trialFailed, trialSucceeded and force publish like recordFailure (a "
                    + "native script that appends only some kinds to the feed, or a second publishing call that "
                    + "misses one path); for a store without both atomic capabilities, TransitionEvent.ofPut"),
    R6_12("R6.12", "After the feed connection is cut (interruptFeed hook) and a write is lost (rewind hook: an "
            + "earlier state written back, as a fail-over to a replica that missed it would leave it), the next "
            + "transition, which carries a version already delivered before the gap, is delivered.",
            "the feed's de-duplication by version (FeedSubscribers.inVersionOrder, a last-version map of the "
                    + "feed): it must be forgotten on every gap, since after a gap the backend may re-issue versions "
                    + "it lost; dropping them leaves every cached instance on the lost state"),

    R7_1("R7.1", "Two breakers on two clients share one operation: failures split between them open both after "
            + "exactly failureThreshold in total.",
            "recordFailure (R2), or get and put for a store without it, and get returning fresh state"),
    R7_2("R7.2", "At trial eligibility, 16 concurrent callers across the two breakers run exactly halfOpenPermits "
            + "trials; the rest are rejected with CircuitOpenException.",
            "claimTrial under concurrency (R4.4) and the openedAt recordFailure stores"),
    R7_3("R7.3", "Each failed trial lengthens the open window by backoffMultiplier, within jitter, up to "
            + "maxResetTimeout.",
            "trialFailed: openCount persisted (R5.3, R5.4) and openedAt = now"),
    R7_4("R7.4", "A successful trial through one breaker closes the operation for the other.",
            "trialSucceeded (R5.1) and get returning the closed state to the other client"),
    R7_5("R7.5", "(real time) With the local cache on both breakers and a 10 s staleTolerance (so only the feed "
            + "can invalidate it), after one breaker opens, the other rejects within 1 s.",
            "subscribe and the publication of transitions (R6.1, R6.3, R6.10): events must reach the other client "
                    + "promptly"),
    R7_6("R7.6", "The errorRate strategy across two breakers opens on the 4-in-5 pattern.",
            "recordOutcome / recordFailure with Strategy.ERROR_RATE (R3.1 to R3.4)"),
    R7_7("R7.7", "forceOpen through one breaker holds every breaker open, with no trials, until reset.",
            "force: FORCED_OPEN persisting the forced flag (R5.5) and CLOSED clearing it"),
    R7_8("R7.8", "With halfOpenPermits 1, callers that lose the claim cost zero store operations per rejected call "
            + "until the trial's outcome is known (the winner's own write, or its claim could have expired).",
            "claimTrial must answer a refused claim with Optional.empty(), never by throwing: a throwing claim is a "
                    + "store error, on which the engine falls back to a per-instance trial"),
    R7_9("R7.9", "A store whose claimTrial throws: under REJECT no call runs; under ALLOW at most halfOpenPermits "
            + "trials per breaker instance run at once, and the failing trials of one open period reopen it once.",
            "trialFailed / trialSucceeded fenced by trialVersion (contract v2): with claims down every instance "
                    + "runs its own trial of the same period, and only the first outcome of the period may apply"),
    R7_10("R7.10", "A thread interrupted or a future cancelled during a call is not recorded as a failure; an "
            + "interrupted trial gives its claim back and leaves the state as it is.",
            "releaseTrial: it must only free the permit, at once and by token (R4.5), never change the state: a "
                    + "claim given back without an outcome is not a failed trial"),
    R7_11("R7.11", "Two breakers on two clients with a time window of 10 s, failure rate 50 % and minimum 20 calls "
            + "share one operation: after 10 failures that then leave the window, 12 successes and 8 failures and "
            + "then failures, both open exactly at the call that brings the window to 50 % (the 24th), whichever "
            + "breaker makes it.",
            "the store's time window (R10.2, R10.3): recording through the engine with Strategy.SLIDING_WINDOW, "
                    + "buckets rolled by the now passed in, and get returning fresh state"),
    R7_12("R7.12", "Two breakers on two clients with a count window of 50, failure rate 50 % and minimum 20 calls "
            + "share one operation: after 30 successes and 20 failures, both open exactly at the call that brings "
            + "the last 50 outcomes to 50 % (the 55th), whichever breaker makes it.",
            "the store's count window (R10.1): the ring of the last 50 outcomes, the >= comparison, and get "
                    + "returning fresh state"),
    R7_13("R7.13", "Two breakers on two clients in the policy mode METRICS_ONLY, with the count window of R7.12, run "
            + "30 successes and 80 failures: no call is rejected and the stored state stays closed; in DISABLED the "
            + "same calls leave nothing stored.",
            "that every outcome rule applies the policy's mode (Policy.mode(), BreakerState.effectiveMode): "
                    + "METRICS_ONLY reports WOULD_OPEN instead of opening (R12.5), DISABLED writes nothing (R12.6)"),
    R7_14("R7.14", "(real time) Two breakers on two clients with a count window of 10, minimum 4 calls and a "
            + "slow-call threshold of 100 ms at 100 %: four calls that hang are counted as slow while they run, so both "
            + "breakers open before any of them ends; each call is counted once when they then fail.",
            "slow_call (counting a running call as a slow success) and slow_call_failed (marking it in place, fenced "
                    + "by version) (R11.3, R11.4), and get returning fresh state"),

    R8_1("R8.1", "Random sequences of every call the store declares (recordFailure, recordSuccess and "
            + "recordOutcome under consecutive, leaky, maxGapBetweenFailures, errorRate and small count and time "
            + "sliding-window policies, some in METRICS_ONLY or DISABLED; slow outcomes, slow_call, and "
            + "slow_call_failed carrying current and stale versions and slots; trialSucceeded and "
            + "trialFailed carrying current and stale versions; force; force_mode; claimTrial; releaseTrial with "
            + "right, wrong and stale tokens; put; delete), over two clients with virtual now moving forward, return and store "
            + "exactly what the reference model (Transitions plus a claim table) does, step after step.",
            "the method the failing step of the printed, shrunk sequence calls: replay it against the store; "
                    + "a native port of Transitions (script, SQL) diverging on a boundary, a new life of a key "
                    + "starting below a version it had, a claim counted or freed wrongly, or a write lost"),
    R8_2("R8.2", "(real time) Random sequences of claims with short (200 ms) and long ttls, permits 1 to 3, "
            + "releases with live, stale, expired and wrong tokens, deletes and waits: a claim holds its permit "
            + "until its ttl (never more than 5 ms early) and frees it within 50 ms after, as the reference claim "
            + "table says; only what real time makes certain is judged.",
            "claimTrial: an expired claim must never count against permits (for every permits value and every "
                    + "claim structure); releaseTrial of an expired token must never free a newer claim"),
    R8_3("R8.3", "Small concurrent scenarios (3 threads of 3 calls over 2 clients, after a sequential prefix) "
            + "are linearizable: some sequential order of the reference model that respects real-time order "
            + "explains every result and the state read afterwards.",
            "the methods of the calls in the printed history: each must be one atomic step in the store "
                    + "(recordFailure/Success/Outcome, slow_call, slow_call_failed, trialSucceeded/Failed, force, "
                    + "force_mode, claimTrial, releaseTrial, put, delete), and get must read the latest state"),
    R8_4("R8.4", "Random sequences as in R8.1, with each client's clock skewed by up to 10 s either way (so "
            + "now goes backwards between calls and lies below the stored openedAt and lastFailureAt), return and "
            + "store exactly what the reference model does.",
            "the method the failing step of the printed, shrunk sequence calls, with a now below the stored "
                    + "times: Transitions has no clamp and no absolute value (a gap is now - lastFailureAt > gap, "
                    + "negative when the clock is behind), so a native port must not clamp now, compare with "
                    + "abs() or treat an earlier now as an error"),
    R8_5("R8.5", "Small concurrent scenarios weighted to claims, releases, forced closes and deletes (3 threads of "
            + "3 calls over 2 clients, after a sequential prefix) are linearizable including the claim table: "
            + "after the threads, the live claims of every key, read back by counting and releasing every token "
            + "issued, are those of the same order of the reference model that explains every result and state.",
            "claimTrial, releaseTrial, force(CLOSED) and delete under concurrency: each must change the claims in "
                    + "one atomic step (a claim taken while force CLOSED or delete runs must not survive it), and "
                    + "a release must remove exactly its own token"),

    R9_1("R9.1", "Under the leaky strategy a failure adds 1 and a success subtracts 1, floored at 0: after every "
            + "call of a scripted pattern over two clients the returned and the stored count are the bucket's level.",
            "recordSuccess / recordOutcome with Strategy.LEAKY (code 2): failures - 1 when failures > 0, never a "
                    + "clear to 0 (that is the consecutive rule), never below 0"),
    R9_2("R9.2", "A leaky success that lowers the count is a write with the same version, no transition and no "
            + "event; a success at 0 writes nothing (an unknown key stays unknown).",
            "recordSuccess with Strategy.LEAKY and failures > 0: a plain write (no version bump, no feed event); "
                    + "with failures = 0 nothing may be written or created"),
    R9_3("R9.3", "The failure that brings the leaky count to failureThreshold opens the breaker (openedAt = now, "
            + "version + 1, OPENED), also when successes came between the failures (F F S F F at threshold 3); "
            + "while open a failure adds to the count without moving openedAt or version, and a success changes "
            + "nothing.",
            "recordFailure with Strategy.LEAKY: the threshold comparison (>=) on the leaky count, and the open "
                    + "branch shared by every strategy"),
    R9_4("R9.4", "With maxGapBetweenFailures under the leaky strategy, a failure later than the gap after the "
            + "previous failure restarts the count at 1 (successes in between do not move lastFailureAt); within "
            + "the gap it adds.",
            "recordFailure with Strategy.LEAKY: the gap comparison (now - lastFailureAt > gap, with failures > 0) "
                    + "runs as for the consecutive strategy, and a leaky success keeps lastFailureAt"),
    R9_5("R9.5", "8 threads over 2 clients record two failures per success from a count of 5,000 under a "
            + "threshold never reached: the stored count is exactly 5,000 plus the failures minus the successes.",
            "recordSuccess and recordOutcome with Strategy.LEAKY: each must be one atomic read-modify-write in the "
                    + "store (a get-then-put loses updates)"),
    R9_6("R9.6", "The result of every call equals Transitions applied to the prior state, for a scripted sequence "
            + "of 60 mixed calls under a leaky policy with maxGapBetweenFailures.",
            "recordFailure, recordSuccess or recordOutcome with Strategy.LEAKY, whichever the failing step names: "
                    + "parity with dev.redeye.spi.Transitions (a native script must express exactly the same rules)"),
    R9_7("R9.7", "Two breakers on two clients with the leaky strategy share one operation: the pattern F F S F S F "
            + "F split between them (threshold 3) opens both on its last failure.",
            "recordOutcome / recordSuccess with Strategy.LEAKY (R9.1 to R9.3), and get returning fresh state"),

    R10_1("R10.1", "A count window: on listed sequences over two clients every call returns and stores what "
            + "Transitions does, and the breaker opens exactly at the outcome that reaches failureRateThreshold once "
            + "the window holds minimumNumberOfCalls outcomes, the minimum capped at the window's size, the rate "
            + "compared with >= (F F F S at 50 %, minimum 4: the 4th; S F F in a window of 3, minimum 10: the 3rd; "
            + "S S S F F at 40 %: the 5th; F S S S F F F in a window of 4 at 75 %: the 7th).",
            "the count window of Strategy.SLIDING_WINDOW (code 3): the ring of size slots (outcome s in slot "
                    + "(s - 1) % size), Policy.windowMinimumCalls() (min(minimumNumberOfCalls, size) for a count "
                    + "window), and failures * 100 >= failureRateThreshold * calls in double, never >"),
    R10_2("R10.2", "A time window: on listed sequences every call returns and stores what Transitions does, and "
            + "the breaker opens exactly at the outcome that reaches the rate once the minimum is met, for a window "
            + "of 10 s (1 s buckets) and one of 300 s (3 s buckets).",
            "the time window: bucket width ceil(size / 120) s, bucket number floorDiv(now, width * 1000), the sums "
                    + "of calls and failures over the buckets, and the stored form SlidingWindow.encode()"),
    R10_3("R10.3", "Time buckets roll over in virtual time: outcomes older than the window stop counting (F S S F "
            + "F F over 3.7 s in a window of 3 s at 60 % opens at the 6th, not the 5th), and an outcome whose now "
            + "falls in an older bucket than the window's newest (a caller whose clock is behind) is counted in the "
            + "newest bucket and leaves with it.",
            "how the store rolls a time window to now's bucket (emptying the buckets it passes, by the now passed "
                    + "in, never its own clock), and that a now behind the window's position records into the "
                    + "newest bucket instead of moving the window back or starting a new one"),
    R10_4("R10.4", "The window is kept, unchanged, while the breaker is open (outcomes while open and force "
            + "HALF_OPEN leave it), emptied when the breaker closes (by a trial or by force), and a window of another "
            + "type or size than the policy's restarts empty.",
            "the open branch (a failure while open touches failures and lastFailureAt only), the closing rules "
                    + "(the window removed, as Transitions.closedFrom does) and the shape check before recording "
                    + "(SlidingWindow.hasShape)"),
    R10_5("R10.5", "8 threads over 2 clients record 100 outcomes each into a count window of 1,000 and a time "
            + "window of 60 s whose minimum is never met: each window then holds exactly 800 outcomes and exactly "
            + "the failures and slow calls recorded.",
            "recording into a window must be one atomic read-modify-write in the store (script, row lock, "
                    + "conditional write retry); a get-then-put loses outcomes"),

    R11_1("R11.1", "Slow outcomes are counted in a window as slow: a slow success toward the slow-call rate, a "
            + "slow failure toward both the failure and the slow-call rate (s f S F: 4 calls, 2 failures, 2 slow, in "
            + "a count and in a time window); the consecutive strategy reads a slow outcome as a plain one.",
            "the slow_success and slow_failure operations (codes 8 and 9): Transitions.recordOutcome(s, success, "
                    + "slow, p, now), the slot codes 2 and 3 of a count window, the third count of a time bucket"),
    R11_2("R11.2", "The slow-call rate opens the breaker exactly at the outcome that reaches slowCallRateThreshold "
            + "once the minimum is met, compared with >= (s S S s at 50 % in a count window of 4; s S f S s at 60 % "
            + "in a time window).",
            "the slow-call side of the trip rule: slowCalls * 100 >= slowCallRateThreshold * calls, a slow "
                    + "failure counted as slow"),
    R11_3("R11.3", "slow_call counts a call still running once, as a slow success, and slow_call_failed marks that "
            + "very call failed in place (calls unchanged, failures + 1, lastFailureAt = now), opening the breaker if "
            + "the failure rate is then reached; a second slow_call_failed of the same call in a count window "
            + "changes nothing, and the other strategies ignore slow_call.",
            "slow_call and slow_call_failed (codes 10 and 11): the slot is the window position slow_call returned "
                    + "(SlidingWindow.slowCallFailed), and a call counted as slow is never counted again"),
    R11_4("R11.4", "slow_call_failed is fenced by the version its slow call was counted under: after the breaker "
            + "opened it is a failure while open (the window and version kept), after it closed again it changes "
            + "nothing (a new slow call in the new window stays a slow success), and a slot not in the window "
            + "changes nothing.",
            "slow_call_failed must compare the state's version with the one it carries (AtomicOperation."
                    + "trialVersion()) before touching the window, as trial outcomes are fenced"),

    R12_1("R12.1", "force_mode is a transition: from an open, a closed or an absent key it closes the breaker with "
            + "fresh counters and the mode stored, version + 1, MODE_CHANGED, also when that mode is stored "
            + "already.",
            "the force_mode operation (code 12, the mode's code in trialVersion()): Transitions.forceMode, the "
                    + "stored mode field (StateCodec 'mode'), the version bump and the MODE_CHANGED kind"),
    R12_2("R12.2", "force_mode removes every trial claim of the key in the same step: right after it, the permit "
            + "an open breaker's trial held can be claimed again.",
            "force_mode must remove the key's claims as a forced close does (AtomicOperation.removesClaims() is true "
                    + "for it)"),
    R12_3("R12.3", "The feed publishes force_mode's MODE_CHANGED and METRICS_ONLY's WOULD_OPEN (from CLOSED) with "
            + "the state and version of the change.",
            "the feed's encoding of every transition kind, the codes 8 (mode_changed) and 9 (would_open) included"),
    R12_4("R12.4", "(real time) A stored mode never expires: a state in METRICS_ONLY put with a 300 ms ttl, and "
            + "(with AtomicUpdates) force_mode and a write in a stored mode under a stateTtl of 300 ms, are all "
            + "still readable, in their mode, 800 ms later.",
            "the expiry of a pinned state (BreakerState.pinned(): forced, or a mode other than DEFAULT): no ttl on "
                    + "put or on atomic writes, as for a forced state (R1.9); a lapsed mode would silently re-enable "
                    + "a breaker an operator disabled"),
    R12_5("R12.5", "In METRICS_ONLY (the policy's mode or the stored one) the outcome where the breaker would open "
            + "keeps it closed: failures, errorRate, samples and the window are reset, version + 1, WOULD_OPEN; "
            + "counting then starts again.",
            "the trip rule of every strategy under BreakerState.effectiveMode(policy) = METRICS_ONLY (the stored "
                    + "mode first, the policy's when DEFAULT is stored)"),
    R12_6("R12.6", "In DISABLED (the policy's mode or the stored one) no outcome changes anything: failures, slow "
            + "outcomes and slow calls write nothing (a key never written stays absent) and never open the breaker.",
            "every outcome rule must return the state unchanged, writing nothing, when the mode in force is "
                    + "DISABLED"),
    R12_7("R12.7", "Forcing a status overrides a mode as Transitions says: force OPEN or HALF_OPEN makes NORMAL the "
            + "mode in force (stored as DEFAULT when the policy's mode is NORMAL, as NORMAL otherwise), force CLOSED "
            + "stores DEFAULT (the policy's mode applies again).",
            "the mode written by the force operations (codes 5 to 7): Transitions.force"),
    R13_1("R13.1", "Outcomes attributed to instances are counted per instance: with a quorum of 2 (consecutive, "
            + "threshold 3), three failures of A through one client open nothing, and B's failure through another "
            + "client opens the breaker in that write; the state read back holds both contributions, the most "
            + "recent first.",
            "that the store applies AtomicOperation.instance() (Transitions.recordOutcome with the instance) and "
                    + "keeps BreakerState.contributors through the write"),
    R13_2("R13.2", "One instance failing alone never opens the fleet: 100 failures of A through two clients make "
            + "no transition, and the state holds one contribution, A's, with 100 failures.",
            "that an instance is counted once: the instance id, not the write or the client, is what is distinct"),
    R13_3("R13.3", "The opening comes with the failure that makes the quorum: with a quorum of 3 (threshold 2), "
            + "failures of A, B, A, B open nothing, and C's failure opens, version + 1.",
            "the quorum count (distinct instances with failures in the scope) and that the strategy's own count "
                    + "goes on below the quorum"),
    R13_4("R13.4", "A state holds at most 16 instances, the most recent: 20 instances failing once each leave the "
            + "contributions of the last 16, the newest first.",
            "the bound (BreakerState.MAX_CONTRIBUTORS) and which contribution drops out: the least recent"),
    R13_5("R13.5", "Contributions survive every write and read, and a time window's expire with the window: both "
            + "clients read the state a write returned, contributions included; contributions older than a 10 s "
            + "window are gone from the next write; put and get keep them.",
            "the layout of the contributions (StateCodec's contributors field, or the store's own) on every path: "
                    + "the atomic write, get, put"),
    R13_6("R13.6", "Parity: random outcomes of three instances through two clients, under a quorum of 2 "
            + "(consecutive and time-window policies), give after every write the state and transition "
            + "Transitions gives.",
            "the store's rule for the outcome the message names, against Transitions.recordOutcome with the "
                    + "instance"),

    R14_1("R14.1", "Random sequences as in R8.1, with batches of 1 to 200 outcomes (AtomicOperation.outcomes, each "
            + "at its own instant) in place of most outcomes, return and store what the outcomes one by one give: "
            + "the state after the last outcome, and the first transition, across openings and modes.",
            "the store's apply of the outcomes rule: each outcome in order, by Transitions.recordOutcome at the "
                    + "outcome's own instant (AtomicOperation.outcomeAt, not the call's now), the previous state "
                    + "before the first outcome, the first transition reported, all in one atomic step"),
    R14_2("R14.2", "8 threads over 2 clients apply 300 batches each of 1 to 16 outcomes to one time window at one "
            + "instant: the window holds every outcome, failure and slow call exactly once.",
            "that a batch is one atomic read-modify-write (a get-then-put loses the batches applied between its "
                    + "read and its write) and that no outcome of a batch is dropped or counted twice"),
    R15_1("R15.1", "Every operation holding a state (put, and an atomic write when offered; hostile names included) "
            + "is listed by the other client, exactly as named, with the state get returns when the entry carries "
            + "one, walking pages of 3, 50 and 1,000; a name never written is not listed.",
            "OperationListing.page: the decoding of the names it returns (the inverse of the key mapping: prefix, "
                    + "escaping, hashing) and that its cursor reaches every page"),
    R15_2("R15.2", "A page never holds more entries than its limit (pages of 1, 2 and 5 over 12 operations), and a "
            + "limit of 0 or above OperationListing.MAX_LIMIT is an IllegalArgumentException.",
            "OperationListing.page: the limit must reach the backend's query (LIMIT, COUNT, a page size), and be "
                    + "checked before it"),
    R15_3("R15.3", "(real time) A listing only reads, and lists only what holds a state: a deleted operation, a "
            + "state past its 300 ms ttl and a key holding only a trial claim are not listed, and three listings "
            + "leave every state as it was and create none.",
            "OperationListing.page: filter out deleted, expired and claim-only data (placeholder rows, claim keys), "
                    + "and write nothing: no touch, no ttl refresh, no placeholder"),
    R15_4("R15.4", "Deleting the operations already listed between pages (pages of 10 over 30 operations) never makes "
            + "the listing skip one of the others.",
            "OperationListing.page's cursor: it must name where the listing stopped (the last key, a scan cursor), "
                    + "never a count of entries to skip (OFFSET), which moves when entries before it go");

    private final String id;
    private final String statement;
    private final String hint;

    Rule(String id, String statement, String hint) {
        this.id = id;
        this.statement = statement;
        this.hint = hint;
    }

    /** The stable id, for example {@code "R2.7"}. */
    public String id() {
        return id;
    }

    /** The one-line statement of the rule. */
    public String statement() {
        return statement;
    }

    /** What to check in the store when this rule fails. */
    public String hint() {
        return hint;
    }

    /** The prefix every test method of this rule starts with, for example {@code "r2_7_"}. */
    public String methodPrefix() {
        return name().toLowerCase(Locale.ROOT) + "_";
    }

    /**
     * Looks a rule up by its id ({@code "R2.7"}, case-insensitive).
     *
     * @throws IllegalArgumentException if no rule has that id
     * @throws NullPointerException     if {@code id} is null
     */
    public static Rule byId(String id) {
        Objects.requireNonNull(id, "id");
        for (Rule r : values()) {
            if (r.id.equalsIgnoreCase(id.trim())) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown TCK rule id '" + id + "' (expected one of " + values()[0].id
                + " to " + values()[values().length - 1].id + ", see Rule)");
    }

    /** The rule a test method name belongs to ({@code r2_7_concurrent...} is R2.7), if any. */
    public static Optional<Rule> ofMethodName(String methodName) {
        if (methodName == null) {
            return Optional.empty();
        }
        for (Rule r : values()) {
            if (methodName.startsWith(r.methodPrefix())) {
                return Optional.of(r);
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return id + " " + statement;
    }
}
