package dev.redeye.kotlin

import dev.redeye.CircuitBreaker
import dev.redeye.Stores
import dev.redeye.api.BreakerStatus
import dev.redeye.api.CircuitOpenException
import dev.redeye.tck.MutableClock
import java.io.IOException
import java.time.Duration
import java.util.UUID
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertInstanceOf
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test

/**
 * Over a real Redis (`REDEYE_REDIS_URL`), two breakers over two clients standing for two instances: suspend
 * calls failing on one open the breaker for the other, and a trial whose coroutine is cancelled gives the
 * fleet-wide claim back at once, so the other instance runs the next trial.
 */
class RedisFleetTest {
    private val clock = MutableClock(1_700_000_000_000L)
    private val prefix = "redeye-test:kotlin:" + UUID.randomUUID().toString().substring(0, 12) + ":"
    private val breakers = mutableListOf<CircuitBreaker>()

    @AfterEach
    fun close() {
        for (b in breakers) {
            try {
                b.config().store().orElseThrow().delete(OP)
            } finally {
                b.close()
            }
        }
    }

    private fun instance(): CircuitBreaker {
        val url = System.getenv("REDEYE_REDIS_URL")
        if (url.isNullOrBlank()) {
            fail<Unit>("No Redis: set REDEYE_REDIS_URL (source scripts/services.sh)")
        }
        val b = CircuitBreaker.builder().store(Stores.open(url!!.trim() + "?prefix=" + prefix)).clock(clock)
            .ticker(clock).jitter(0.0).failureThreshold(2).resetTimeout(Duration.ofSeconds(10))
            .trialTimeout(Duration.ofSeconds(30)).build()
        breakers.add(b)
        return b
    }

    @Test
    fun failuresOnOneInstanceRejectTheOtherAndACancelledTrialGoesBackToTheFleet() = runTest {
        val a = instance()
        val b = instance()
        repeat(2) {
            val e = runCatching { a.executeSuspend(OP) { throw IOException("down") } }.exceptionOrNull()
            assertInstanceOf(IOException::class.java, e)
        }
        val rejected = runCatching { flow { emit("x") }.circuitBreaker(b, OP).toList() }.exceptionOrNull()
        assertInstanceOf(CircuitOpenException::class.java, rejected, "B sees the opening in the shared store")

        clock.advance(Duration.ofSeconds(10))
        val trial = launch(start = CoroutineStart.UNDISPATCHED) { a.executeSuspend(OP) { awaitCancellation() } }
        assertEquals(1, a.metrics(OP).trials())
        trial.cancel()
        trial.join()
        assertEquals(BreakerStatus.HALF_OPEN, a.status(OP), "the cancellation recorded nothing")
        // without the release B would be refused until trialTimeout (30 s; the clock does not move)
        assertEquals("ok", b.executeSuspend(OP) { "ok" })
        assertEquals(1, b.metrics(OP).trials())
        assertEquals(BreakerStatus.CLOSED, a.status(OP), "B's trial closed it for the fleet")
    }

    private companion object {
        const val OP = "ledger"
    }
}
