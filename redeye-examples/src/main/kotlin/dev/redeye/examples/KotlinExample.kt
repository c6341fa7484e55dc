/**
 * Kotlin coroutines guarded by `redeye-kotlin`: a suspending call with `executeSuspend`, a coroutine cancelled
 * mid-call (which is never a failure), and a `Flow` with `circuitBreaker`. `ExamplesTest` runs [main].
 */
@file:JvmName("KotlinExample")

package dev.redeye.examples

import dev.redeye.CircuitBreaker
import dev.redeye.api.CircuitOpenException
import dev.redeye.kotlin.circuitBreaker
import dev.redeye.kotlin.executeSuspend
import java.io.IOException
import java.io.PrintStream
import java.time.Duration
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.flowOf
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield

/** Runs the example; prints one line per call to stdout. */
fun main(@Suppress("UNUSED_PARAMETER") args: Array<String>) {
    run(System.out)
}

internal fun run(out: PrintStream) {
    CircuitBreaker.builder().failureThreshold(2).resetTimeout(Duration.ofMinutes(1)).build().use { breaker ->
        runBlocking {
            var attempts = 0
            suspend fun quote(): String {
                attempts++
                delay(5)
                if (attempts > 2) {
                    throw IOException("pricing service down")
                }
                return "price 42"
            }
            for (i in 1..5) {
                val answer = try {
                    breaker.executeSuspend("pricing") { quote() }
                } catch (e: CircuitOpenException) {
                    "fallback (CircuitOpenException)"
                } catch (e: IOException) {
                    "fallback (IOException)"
                }
                out.println("call $i: $answer")
            }
            out.println("calls that reached the pricing service: $attempts")
            out.println("pricing: ${breaker.status("pricing")}, ${breaker.metrics("pricing")}")

            // a coroutine cancelled while its call is in flight: nothing is recorded, the permit goes back
            val job = launch { breaker.executeSuspend("inventory") { awaitCancellation() } }
            yield()
            job.cancelAndJoin()
            out.println("inventory after a cancelled call: ${breaker.status("inventory")}, ${breaker.metrics("inventory")}")

            // a Flow: each collection is one call
            val stock = flowOf("apple", "pear").circuitBreaker(breaker, "stock").toList()
            out.println("stock: $stock, ${breaker.metrics("stock")}")
        }
    }
}
