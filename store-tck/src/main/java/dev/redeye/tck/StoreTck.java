package dev.redeye.tck;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The redeye store TCK: the contract suite any {@link dev.redeye.spi.Store} runs against itself. Extend this
 * class in your store's test sources, return a new independent client from {@link #newClient()} on each call
 * (two clients stand for two processes), and run it with JUnit 5:
 *
 * <pre>{@code
 * class RedisStoreTckTest extends StoreTck {
 *     protected Store newClient() { return RedisStore.open(redisUri); }
 *     protected Set<Class<?>> expectedCapabilities() {
 *         return Set.of(AtomicUpdates.class, TrialClaims.class, TransitionFeed.class);
 *     }
 * }
 * }</pre>
 *
 * <p>Every test method carries the id of the rule it checks ({@code r2_7_...} checks R2.7); {@link Rule} is
 * the numbered list of rules with each rule's statement and what to check when it fails, and every failure
 * message starts with "R2.7 violated:" and ends with that hint. R1 is required (R1.10 to R1.12 make
 * transitions, so they need {@code AtomicUpdates}); R2 to R6 run when the
 * store declares the capability ({@code store.capability(X).isPresent()}) and are reported as skipped with the
 * reason ("store does not declare TrialClaims") when it does not; a declared capability is never skipped for
 * want of another (R6 makes its transitions with whatever the store offers, puts included), and a declared
 * capability whose rule fails is a failure. R7 runs the engine ({@code dev.redeye.CircuitBreaker}) over two
 * clients of the store. {@link #expectedCapabilities()} is abstract: the implementer states what the store
 * declares ({@code Set.of()} for a plain store), and R0.1 fails when the store lacks one of them.
 *
 * <p>Optional hooks, each written with raw access to the backend: {@link #corrupt(dev.redeye.spi.Store, String)}
 * (R1.7: malformed data under a key), {@link #interruptFeed(dev.redeye.spi.Store)} (R6.8 and R6.12: cut the
 * feed connection) and {@link #rewind(dev.redeye.spi.Store, String, dev.redeye.api.BreakerState)} (R6.12: an
 * earlier state written back, as a lost write leaves it); without them those rules are skipped with the
 * reason. {@link #cleanup()} runs after each test; each test uses a fresh random key prefix, so it can stay
 * empty.
 *
 * <p>R9 holds the store to the leaky strategy ({@code Strategy.LEAKY}: a failure adds 1, a success subtracts 1,
 * floored at 0) when it declares {@code AtomicUpdates}; R9.7 runs it through the engine. R10 to R12 hold it to
 * sliding windows (count and time window arithmetic, bucket roll-over, the window's life, atomicity), slow calls
 * (slow outcomes, the slow-call rate, {@code slow_call} and {@code slow_call_failed} fenced by version) and modes
 * ({@code force_mode} as a transition, a stored mode never expiring, {@code METRICS_ONLY}, {@code DISABLED},
 * forced statuses against modes), each on listed sequences checked against {@code Transitions}; R7.11 and R7.12
 * run a time and a count window through two breakers, R7.13 the modes METRICS_ONLY and DISABLED.
 *
 * <p>R13 holds a store with {@code QuorumState} to quorum opening; R14 one with {@code OutcomeBatches} to batches
 * of outcomes (R14.1: the model's scenarios with batches, against the outcomes one by one; R14.2: concurrent
 * batches counted exactly).
 *
 * <p>R8 checks the store against a reference model ({@code Transitions} plus a claim table) on random
 * scenarios drawn from a fixed seed: R8.1 sequences of every call the store declares over two clients, R8.2
 * claims expiring in real time, R8.3 linearizability of small concurrent scenarios, R8.4 the sequences of R8.1
 * with each client's clock skewed by up to 10 s either way, R8.5 concurrent scenarios of claims with the claim
 * table read back. It needs no hook: any store that runs the other rules runs R8. A failing sequence is
 * shrunk against the store and printed as Java to replay, with the seed; {@value TckRunner#SEED_PARAMETER}
 * and {@value TckRunner#TRIES_PARAMETER} (JUnit configuration parameters or system properties) change the
 * seed and the number of scenarios.
 *
 * <p>Time is virtual ({@code now} is passed in), except expiry (R1.9 to R1.12, R4.7, R4.8, R4.11, R5.7, R8.2,
 * R12.4: ttls of 200 to 800 ms, real time; R4.10: claims of 1.5 s and 10 s side by side, about 10 s, the longest
 * rule), feed latency (R6.10: 1 s) and R7.5 (the local cache, real time). Feed rules wait at most 10 s for an
 * event and finish as soon as it arrives. The whole suite takes about half a minute in memory and about a
 * minute against a local server; the concurrency rules use 8 to 32 threads over two clients, so a store must
 * tolerate that many concurrent callers per client. The TCK opens clients through {@code newClient()} and
 * closes each one after the test.
 *
 * <p>At the end of a JUnit run the TCK prints its own rule report (passed, failed, skipped with the reason
 * and the capability a skipped group needs) through {@link TckReportListener}, which the TCK jar registers
 * with the JUnit Platform. Tests run in rule order ({@link MethodOrderer.MethodName}). Run the suite outside
 * a build, hooks included, with {@link TckRunner#run(Class)}.
 */
@TestMethodOrder(MethodOrderer.MethodName.class)
public abstract class StoreTck extends TckBase implements PlainStoreRules, RecordingRules, ClaimRules,
        TransitionRules, FeedRules, EngineRules, ModelRules, LeakyRules, WindowRules, SlowCallRules, ModeRules,
        QuorumRules, BatchRules, ListingRules {
}
