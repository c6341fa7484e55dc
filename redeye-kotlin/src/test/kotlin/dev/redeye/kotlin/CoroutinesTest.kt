package dev.redeye.kotlin

import dev.redeye.CircuitBreaker
import dev.redeye.api.BreakerStatus
import dev.redeye.api.CircuitOpenException
import dev.redeye.tck.MutableClock
import java.io.IOException
import java.time.Duration
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.collect
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOf
import kotlinx.coroutines.flow.onStart
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.advanceUntilIdle
import kotlinx.coroutines.test.runCurrent
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertInstanceOf
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** What executeSuspend and Flow.circuitBreaker record, on kotlinx-coroutines-test's virtual time. */
@OptIn(ExperimentalCoroutinesApi::class)
class CoroutinesTest {
    private val clock = MutableClock(1_700_000_000_000L)
    private val ignored = AtomicReference<Throwable>()
    private val failures = mutableListOf<Throwable>()
    private val breaker: CircuitBreaker = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0.0)
        .failureThreshold(2).resetTimeout(Duration.ofSeconds(10)).trialTimeout(Duration.ofSeconds(5))
        .recordResult { it == "bad" }
        .recordFailure { failures.add(it); true }
        .onIgnoredError { _, e -> ignored.set(e) }
        .build()

    @AfterEach
    fun close() = breaker.close()

    private fun metrics() = breaker.metrics(OP)

    private suspend fun fail(): Nothing = throw IOException("down")

    private suspend fun trip() {
        repeat(2) {
            assertInstanceOf(IOException::class.java, runCatching { breaker.executeSuspend(OP) { fail() } }.exceptionOrNull())
        }
        assertEquals(BreakerStatus.OPEN, breaker.status(OP))
    }

    @Test
    fun aValueIsASuccessThroughRecordResultAndAnExceptionAFailureRethrownUnchanged() = runTest {
        assertEquals("42", breaker.executeSuspend(OP) { delay(1_000); "42" })
        val thrown = runCatching { breaker.executeSuspend(OP) { fail() } }.exceptionOrNull()
        assertInstanceOf(IOException::class.java, thrown)
        assertEquals("down", thrown!!.message)
        assertEquals("bad", breaker.executeSuspend(OP) { "bad" })
        assertEquals(1, metrics().successes())
        assertEquals(2, metrics().failures(), "the exception and the value recordResult calls bad")
        assertEquals(BreakerStatus.OPEN, breaker.status(OP))
    }

    @Test
    fun anOpenBreakerThrowsItsRejectionWithoutRunningTheBlock() = runTest {
        trip()
        val ran = AtomicInteger()
        val e = runCatching { breaker.executeSuspend(OP) { ran.incrementAndGet() } }.exceptionOrNull()
        val open = assertInstanceOf(CircuitOpenException::class.java, e)
        assertEquals(OP, open.operation())
        assertEquals(Duration.ofSeconds(10), open.retryAfter().orElseThrow())
        assertEquals(0, ran.get())
        assertEquals(1, metrics().rejections())
    }

    @Test
    fun aCancelledCoroutineRecordsNothingAndGivesTheTrialBack() = runTest {
        trip()
        clock.advance(Duration.ofSeconds(10))
        val job = launch { breaker.executeSuspend(OP) { awaitCancellation() } }
        runCurrent()
        assertEquals(1, metrics().trials(), "the coroutine holds the trial")
        job.cancel()
        job.join()
        assertEquals(2, metrics().failures(), "the cancellation is no failure")
        assertEquals(0, metrics().successes())
        assertEquals(null, ignored.get(), "nor an ignored error: the permit was released")
        val next = breaker.tryAcquire(OP)
        assertTrue(next.isTrial, "the trial claim came back at once, not after trialTimeout: $next")
        next.onSuccess()
        assertEquals(BreakerStatus.CLOSED, breaker.status(OP))
    }

    @Test
    fun aTimeoutAroundTheCallIsTheCallersCancellationAndOneInsideItIsAFailure() = runTest {
        val around = runCatching { withTimeout(1_000) { breaker.executeSuspend(OP) { delay(5_000) } } }
        assertInstanceOf(TimeoutCancellationException::class.java, around.exceptionOrNull())
        assertEquals(0, metrics().failures(), "the caller gave up: nothing recorded")
        assertEquals(1, metrics().ignored(), "released unused")

        val inside = runCatching { breaker.executeSuspend(OP) { withTimeout(1_000) { delay(5_000) } } }
        assertInstanceOf(TimeoutCancellationException::class.java, inside.exceptionOrNull(), "rethrown unchanged")
        assertEquals(1, metrics().failures(), "the call's own timeout is a failure")
        assertInstanceOf(TimeoutException::class.java, failures.single(), "recordFailure sees a TimeoutException")
    }

    @Test
    fun aFlowCompletionIsOneSuccessAndAnUpstreamErrorAFailure() = runTest {
        assertEquals(listOf("a", "bad", "c"), flowOf("a", "bad", "c").circuitBreaker(breaker, OP).toList())
        assertEquals(1, metrics().successes(), "one call; recordResult is not applied to elements")
        val upstreamFails = flow { emit("a"); fail() }.circuitBreaker(breaker, OP)
        assertInstanceOf(IOException::class.java, runCatching { upstreamFails.toList() }.exceptionOrNull())
        assertEquals(1, metrics().failures())
    }

    @Test
    fun eachCollectionAsksAndARejectedOneNeverCollectsTheUpstream() = runTest {
        val collected = AtomicInteger()
        val failing: Flow<String> = flow<String> { fail() }.onStart { collected.incrementAndGet() }
            .circuitBreaker(breaker, OP)
        repeat(3) { runCatching { failing.collect() } }
        assertEquals(2, collected.get(), "the third collection was rejected before the upstream started")
        assertEquals(1, metrics().rejections())
    }

    @Test
    fun aCollectorStoppingAfterAnElementIsASuccessAndItsOwnExceptionNeverAFailure() = runTest {
        assertEquals("a", flowOf("a", "b").circuitBreaker(breaker, OP).first())
        assertEquals(listOf("a"), flowOf("a", "b").circuitBreaker(breaker, OP).take(1).toList())
        val collectorFails = runCatching {
            flowOf("a", "b").circuitBreaker(breaker, OP).collect { throw IllegalStateException("collector") }
        }
        assertEquals("collector", collectorFails.exceptionOrNull()!!.message)
        assertEquals(3, metrics().successes())
        assertEquals(0, metrics().failures())
    }

    @Test
    fun aFlowCancelledBeforeAnyElementRecordsNothingAndGivesTheTrialBack() = runTest {
        trip()
        clock.advance(Duration.ofSeconds(10))
        val job = launch(start = CoroutineStart.UNDISPATCHED) {
            flow<String> { awaitCancellation() }.circuitBreaker(breaker, OP).collect()
        }
        job.cancel()
        advanceUntilIdle()
        assertTrue(job.isCancelled)
        assertEquals(2, metrics().failures())
        assertEquals(1, metrics().trials())
        assertTrue(breaker.tryAcquire(OP).isTrial, "the trial claim came back")
    }

    @Test
    fun aFlowCancelledAfterAnElementIsASuccess() = runTest {
        val job = launch(start = CoroutineStart.UNDISPATCHED) {
            flow { emit("a"); awaitCancellation() }.circuitBreaker(breaker, OP).collect()
        }
        job.cancel()
        job.join()
        assertEquals(1, metrics().successes())
        assertEquals(0, metrics().failures())
    }

    @Test
    fun anEmptyOperationIsRefusedAtOnce() {
        assertThrows(IllegalArgumentException::class.java) { flowOf(1).circuitBreaker(breaker, "") }
        assertFalse(breaker.allMetrics().containsKey(""))
    }

    private companion object {
        const val OP = "pricing"
    }
}
