/**
 * Kotlin coroutines for a redeye [CircuitBreaker]: [executeSuspend] for a suspending call and
 * [circuitBreaker] for a [Flow], both through the breaker's permission API ([CircuitBreaker.tryAcquire]).
 *
 * A coroutine's cancellation is never a failure: a cancelled call records nothing and gives its permit back (a
 * half-open trial's claim included), so cancelling the requests of a shutting-down instance does not open the
 * fleet's breakers.
 */
@file:JvmName("RedeyeCoroutines")

package dev.redeye.kotlin

import dev.redeye.CircuitBreaker
import dev.redeye.Permit
import java.util.concurrent.TimeoutException
import kotlin.coroutines.cancellation.CancellationException
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.isActive

/**
 * Runs [block] as one call of [operation] guarded by this breaker, in the calling coroutine:
 *
 * ```kotlin
 * val price = breaker.executeSuspend("pricing") { pricing.get(item) }     // throws CircuitOpenException when open
 * ```
 *
 * - **Admission**: a permit is asked for first ([CircuitBreaker.tryAcquire]); a rejection throws it
 *   ([dev.redeye.api.CircuitOpenException], with `retryAfter()`, or [dev.redeye.api.StoreUnavailableException])
 *   and [block] does not run. Neither the breaker's `fallback` nor its `callTimeout` applies (see [Permit]).
 * - **Outcome**: the value [block] returns goes through the breaker's `recordResult` predicate, as a value
 *   `execute` returns would; an exception it throws is a failure under the breaker's `recordFailure` predicate
 *   and is rethrown unchanged.
 * - **Cancellation**: if the calling coroutine is cancelled (its job, or a `withTimeout` *around* this call), or
 *   [block] ends with another [CancellationException], nothing is recorded and the permit is given back. A
 *   `withTimeout` *inside* [block] that expires while the caller is still active is the call's own timeout: a
 *   failure, given to `recordFailure` as a [TimeoutException] (the engine never counts a cancellation), and the
 *   [TimeoutCancellationException] is rethrown.
 *
 * Admission and the outcome's write run on the coroutine's thread and are not suspending: in local mode, or
 * with the breaker's local cache on the healthy path, they make no store call; in distributed mode without it,
 * admission reads the store once and a failure writes to it. Run network-store breakers on a dispatcher that
 * may block (`Dispatchers.IO`) or enable `localCache()`.
 *
 * @throws dev.redeye.api.CircuitOpenException if the breaker rejects the call
 * @throws dev.redeye.api.StoreUnavailableException if the store failed under `StoreErrorPolicy.REJECT`
 * @throws IllegalArgumentException if [operation] is empty
 * @throws IllegalStateException if the breaker is closed
 */
public suspend fun <T> CircuitBreaker.executeSuspend(operation: String, block: suspend () -> T): T {
    val permit = tryAcquire(operation)
    if (!permit.isPermitted) {
        throw permit.rejection()
    }
    val result = try {
        block()
    } catch (e: Throwable) {
        permit.endWith(e, emitted = false)
        throw e
    }
    permit.onResult(result)
    return result
}

/**
 * This flow guarded by [breaker] for [operation]: each collection is one call, asking for a permit when it
 * starts:
 *
 * ```kotlin
 * ledger.entries(customer).circuitBreaker(breaker, "ledger").collect { show(it) }
 * ```
 *
 * - **Admission**: at the start of each collection; a rejection is thrown to the collector and the upstream
 *   flow is not collected.
 * - **Completion** of the upstream is a success (its elements are not given to `recordResult`); an exception
 *   it throws is a failure under `recordFailure`, rethrown unchanged. A `withTimeout` inside the upstream that
 *   expires while the collector is active counts as a failure, as in [executeSuspend].
 * - **Cancellation before any element** (the collecting coroutine cancelled, a `withTimeout` around the
 *   collection): nothing is recorded and the permit is given back.
 * - **The collector stops after an element** (`first()`, `take(n)`, a cancel, or an exception thrown by the
 *   collector or a downstream operator): a success, since the dependency answered; the same rule as
 *   `redeye-reactor`'s `RedeyeOperator` and Resilience4j's Reactor operator. (Resilience4j's own
 *   `Flow.circuitBreaker` releases the permit there instead.) An exception from downstream is never the
 *   dependency's failure.
 *
 * What runs on which thread is as for [executeSuspend]: admission and the outcome's write are not suspending.
 *
 * @throws IllegalArgumentException if [operation] is empty (at once; a closed breaker throws
 *   [IllegalStateException] at collection)
 */
public fun <T> Flow<T>.circuitBreaker(breaker: CircuitBreaker, operation: String): Flow<T> {
    require(operation.isNotEmpty()) { "operation must not be empty" }
    val upstream = this
    return flow {
        val permit = breaker.tryAcquire(operation)
        if (!permit.isPermitted) {
            throw permit.rejection()
        }
        var emitted = false
        var downstreamThrew = false
        try {
            upstream.collect { value ->
                emitted = true
                try {
                    emit(value)
                } catch (e: Throwable) {
                    downstreamThrew = true
                    throw e
                }
            }
        } catch (e: Throwable) {
            if (downstreamThrew) {
                permit.onSuccess() // an element reached the collector, which then stopped or failed on its own
            } else {
                permit.endWith(e, emitted)
            }
            throw e
        }
        permit.onSuccess()
    }
}

/**
 * Completes this permit for a call that ended with [error]: a cancellation of the caller (or any
 * [CancellationException] but the call's own timeout) releases it, or counts as a success when the call had
 * already delivered an element; the call's own timeout is a failure; anything else goes to `onFailure`, whose
 * predicate and interrupt rules decide.
 */
private suspend fun Permit.endWith(error: Throwable, emitted: Boolean) {
    val callerActive = currentCoroutineContext().isActive
    when {
        error is TimeoutCancellationException && callerActive ->
            onFailure(TimeoutException(error.message ?: "timed out"))
        error is CancellationException || !callerActive ->
            if (emitted) onSuccess() else release()
        else -> onFailure(error)
    }
}
