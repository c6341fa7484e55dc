package dev.redeye.resilience4j

import dev.redeye.tck.MutableClock
import io.github.resilience4j.circuitbreaker.CallNotPermittedException
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType
import io.github.resilience4j.kotlin.circuitbreaker.executeSuspendFunction
import java.io.IOException
import java.time.Duration
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * resilience4j-kotlin's `executeSuspendFunction` over the adapter, in coroutines: it acquires the permission where
 * the coroutine starts, suspends in the block (`delay`), and reports the outcome on the thread the coroutine
 * resumed on, which on `Dispatchers.Default` may be another one; a cancelled coroutine releases its permission.
 * Local mode on a virtual clock (redeye's clock and ticker); `delay` runs on real time, a few milliseconds.
 */
class KotlinCoroutinesTest {
    private val clock = MutableClock(1_700_000_000_000L)
    private val breakers = Resilience4jBreakers.builder().redeyeOptions { it.clock(clock).ticker(clock) }.build()

    @AfterEach
    fun close() {
        breakers.close()
    }

    /** Count window of `window` calls, rates from `minimum` calls, 50 % opens, a 10 s wait, 1 call in half-open. */
    private fun breaker(window: Int = 10, minimum: Int = 4): RedeyeBackedCircuitBreaker =
        breakers.circuitBreaker("backend", CircuitBreakerConfig.custom()
            .slidingWindow(window, minimum, SlidingWindowType.COUNT_BASED)
            .failureRateThreshold(50f)
            .waitDurationInOpenState(WAIT)
            .permittedNumberOfCallsInHalfOpenState(1)
            .build())

    /** Fails calls until the breaker opens (at most 4: the window's minimum), then waits out the open state. */
    private suspend fun openAndWait(cb: RedeyeBackedCircuitBreaker) {
        for (i in 0 until 4) {
            if (cb.state == State.OPEN) {
                break
            }
            val thrown = runCatching { cb.executeSuspendFunction<String> { throw IOException("down") } }
                .exceptionOrNull()
            assertTrue(thrown is IOException, "$thrown")
        }
        assertEquals(State.OPEN, cb.state)
        clock.advance(WAIT)
        assertEquals(State.HALF_OPEN, cb.state)
    }

    @Test
    fun aSuspendFunctionsValueIsASuccess() = runBlocking(Dispatchers.Default) {
        val cb = breaker()
        val answer = cb.executeSuspendFunction {
            delay(10)
            "ok"
        }
        assertEquals("ok", answer)
        assertEquals(1, cb.metrics.numberOfSuccessfulCalls)
        assertEquals(0, cb.metrics.numberOfFailedCalls)
        assertEquals(0, cb.outstandingPermits())
    }

    @Test
    fun aSuspendFunctionsExceptionIsAFailure() = runBlocking(Dispatchers.Default) {
        val cb = breaker()
        repeat(4) {
            val thrown = runCatching {
                cb.executeSuspendFunction<String> {
                    delay(5)
                    throw IOException("down")
                }
            }.exceptionOrNull()
            assertTrue(thrown is IOException, "the block's exception reaches the caller: $thrown")
        }
        assertEquals(4, cb.metrics.numberOfFailedCalls)
        assertEquals(State.OPEN, cb.state)
        assertEquals(0, cb.outstandingPermits())
    }

    @Test
    fun anOpenBreakerThrowsCallNotPermittedExceptionWithoutRunningTheBlock() = runBlocking(Dispatchers.Default) {
        val cb = breaker()
        repeat(4) {
            val thrown = runCatching { cb.executeSuspendFunction<String> { throw IOException("down") } }
                .exceptionOrNull()
            assertTrue(thrown is IOException, "$thrown")
        }
        assertEquals(State.OPEN, cb.state)
        val ran = AtomicInteger()
        val thrown = runCatching {
            cb.executeSuspendFunction {
                ran.incrementAndGet()
                "never"
            }
        }.exceptionOrNull()
        assertTrue(thrown is CallNotPermittedException, "rejected: $thrown")
        assertEquals(0, ran.get())
        assertEquals(1L, cb.metrics.numberOfNotPermittedCalls)
        assertEquals(0, cb.outstandingPermits())
    }

    @Test
    fun aCancelledCoroutineRecordsNothingAndGivesItsPermitBack() = runBlocking(Dispatchers.Default) {
        val cb = breaker()
        cancelWhileRunning(cb)
        assertEquals(0, cb.outstandingPermits())
        assertEquals(0, cb.metrics.numberOfBufferedCalls, "a cancellation is neither a success nor a failure")

        // In half-open the one permitted call is the trial: cancelled, it goes back and the next call has it.
        openAndWait(cb)
        cancelWhileRunning(cb)
        assertEquals(State.HALF_OPEN, cb.state, "the cancellation recorded nothing")
        assertEquals("ok", cb.executeSuspendFunction {
            delay(5)
            "ok"
        })
        assertEquals(State.CLOSED, cb.state)
        assertEquals(0, cb.outstandingPermits())
    }

    /** A coroutine suspended inside `executeSuspendFunction`, cancelled there. */
    private suspend fun cancelWhileRunning(cb: RedeyeBackedCircuitBreaker) = withContext(Dispatchers.Default) {
        val running = CompletableDeferred<Unit>()
        val job = launch {
            cb.executeSuspendFunction<String> {
                running.complete(Unit)
                awaitCancellation()
            }
        }
        withTimeout(BOUND_MS) { running.await() }
        assertEquals(1, cb.outstandingPermits(), "the call holds its permit while it runs")
        job.cancelAndJoin()
    }

    @Test
    fun aCoroutineResumedOnAnotherThreadCompletesThePermitItAcquired() {
        val cb = breaker()
        TwoThreads().use { two ->
            // The trial (the only call permitted) is acquired on one thread and succeeds on the other: it closes.
            runBlocking { openAndWait(cb) }
            val (acquiredOn, completedOn) = runBlocking(two) {
                cb.executeSuspendFunction {
                    val before = Thread.currentThread().name
                    two.moveOn()
                    before to Thread.currentThread().name
                }
            }
            assertEquals(TwoThreads.FIRST, acquiredOn.substringBefore(' '))
            assertEquals(TwoThreads.SECOND, completedOn.substringBefore(' '))
            assertEquals(State.CLOSED, cb.state, "the trial's success, reported on $completedOn")
            assertEquals(0, cb.outstandingPermits())

            // The next trial fails on the other thread: it reopens.
            runBlocking { openAndWait(cb) }
            val threads = mutableListOf<String>()
            two.reset()
            val thrown = runBlocking(two) {
                runCatching {
                    cb.executeSuspendFunction<String> {
                        threads += Thread.currentThread().name
                        two.moveOn()
                        threads += Thread.currentThread().name
                        throw IOException("down")
                    }
                }.exceptionOrNull()
            }
            assertTrue(thrown is IOException, "$thrown")
            assertEquals(TwoThreads.FIRST, threads[0].substringBefore(' '))
            assertEquals(TwoThreads.SECOND, threads[1].substringBefore(' '))
            assertEquals(State.OPEN, cb.state, "the trial failed on ${threads[1]}")
            assertFalse(cb.tryAcquirePermission())
            assertEquals(0, cb.outstandingPermits())
        }
    }

    @Test
    fun manyCoroutinesOnDispatchersDefaultLeaveNoPermitOutstandingAndRecordEveryFailure() = runBlocking {
        // A window that never reaches its minimum: every call is admitted and recorded, none opens the breaker.
        val cb = breaker(window = 1_000, minimum = 1_000)
        val calls = 300
        val failuresSent = AtomicInteger()
        val resumedElsewhere = AtomicInteger()
        val outcomes = (0 until calls).map { i ->
            async(Dispatchers.Default) {
                runCatching {
                    cb.executeSuspendFunction {
                        val before = Thread.currentThread()
                        delay((i % 4 + 1).toLong())
                        if (Thread.currentThread() != before) {
                            resumedElsewhere.incrementAndGet()
                        }
                        if (i % 5 == 0) {
                            failuresSent.incrementAndGet()
                            throw IOException("down $i")
                        }
                        i
                    }
                }
            }
        }.awaitAll()
        assertEquals(failuresSent.get(), outcomes.count { it.exceptionOrNull() is IOException })
        assertTrue(resumedElsewhere.get() > 0, "some coroutines resumed on another thread than they acquired on")
        assertEquals(0, cb.outstandingPermits(), "every permit completed")
        assertEquals(calls, cb.metrics.numberOfBufferedCalls, "each call recorded once")
        assertEquals(failuresSent.get(), cb.metrics.numberOfFailedCalls)
        assertEquals(State.CLOSED, cb.state)
    }

    /**
     * Two single-thread executors: every dispatch (a coroutine's start, each resume, whoever dispatches it) runs on
     * [FIRST] until the coroutine calls [moveOn], and on [SECOND] after, so the code after [moveOn] runs on another
     * thread than the code before it, however many dispatches the code in between makes.
     */
    private class TwoThreads : CoroutineDispatcher(), AutoCloseable {
        private val threads: List<ExecutorService> = listOf(FIRST, SECOND).map { name ->
            Executors.newSingleThreadExecutor { r -> Thread(r, name) }
        }
        @Volatile
        private var target = 0

        override fun dispatch(context: CoroutineContext, block: Runnable) {
            threads[target].execute(block)
        }

        /** Sends every later dispatch to [SECOND], then suspends until it resumes there. */
        suspend fun moveOn() {
            target = 1
            yield()
        }

        /** Sends dispatches to [FIRST] again. */
        fun reset() {
            target = 0
        }

        override fun close() {
            threads.forEach { it.shutdownNow() }
        }

        companion object {
            const val FIRST = "first"
            const val SECOND = "second"
        }
    }

    private companion object {
        val WAIT: Duration = Duration.ofSeconds(10)
        /** The longest a test waits for a coroutine to reach its suspension; no assertion is about time. */
        const val BOUND_MS = 30_000L
    }
}
