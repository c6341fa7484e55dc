package dev.redeye.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.CountingStore;
import dev.redeye.InMemoryStore;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.Contribution;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.Store;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;

/**
 * The dashboard in real headless Chromium ({@link Chromium}) over an in-memory store that other clients of the
 * same data change, as other processes would: a breaker opened elsewhere turns red within a second without a
 * reload, force-open from the page holds the breaker open for a second client, a wrong token is refused, a
 * browser whose stream drops gets the current states back, 1,000 operations at 20 transitions a second render
 * within budget, and the server's store reads are the same with 1 browser and with 3 (counted by
 * {@link CountingStore} around the server's store). The refresh interval is an hour: the test runs each refresh
 * itself ({@link FleetView#refreshNow()}), so that the reads of two phases compare exactly.
 *
 * <p>It also takes the README's screenshot: {@code target/dashboard.png} on every run, copied to
 * {@code docs/dashboard.png} with {@code -Dredeye.screenshot.write=true}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardBrowserTest {
    private static final Policy POLICY = Policy.builder().failureThreshold(5).resetTimeout(Duration.ofSeconds(60))
            .jitter(0.0).build();
    private static final String TOKEN = "test-token-0123456789";
    private static final int LOAD_OPERATIONS = 1_000;

    private InMemoryStore backend;
    private CountingStore serverStore;
    private FleetView view;
    private DashboardServer server;
    private ChromeDriver browser;
    private final List<ChromeDriver> more = new ArrayList<>();
    private final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeAll
    void start() {
        backend = new InMemoryStore();
        serverStore = new CountingStore(backend.newClient());
        view = new FleetView(serverStore, POLICY, List.of(), Duration.ofHours(1), Clock.systemUTC());
        view.start();
        // after the view subscribed: these transitions are in the timeline too
        Store demo = backend.newClient();
        closing.add(demo);
        demoStates(demo);
        view.refreshNow(); // the puts (counters, not transitions) come with a refresh
        server = DashboardServer.start(view, "127.0.0.1", 0, TOKEN, false);
        browser = Chromium.start();
        browser.get(server.url());
        waitFor("the first tiles", () -> tileCount(browser) >= 8, 15_000);
    }

    @AfterAll
    void stop() {
        more.forEach(ChromeDriver::quit);
        if (browser != null) {
            browser.quit();
        }
        for (AutoCloseable c : closing) {
            try {
                c.close();
            } catch (Exception e) {
                // best effort
            }
        }
        if (server != null) {
            server.close();
        }
        if (view != null) {
            view.close();
        }
        if (serverStore != null) {
            serverStore.close();
        }
        if (backend != null) {
            backend.close();
        }
    }

    /** A few operations in every state the page shows, written as other processes would. */
    private void demoStates(Store client) {
        long now = System.currentTimeMillis();
        AtomicUpdates u = client.capability(AtomicUpdates.class).orElseThrow();
        for (String op : List.of("accounts", "billing", "catalog", "email", "geo-lookup", "inventory",
                "recommendations", "search", "shipping")) {
            client.put(op, BreakerState.INITIAL, Duration.ofHours(1));
        }
        client.put("billing", BreakerState.INITIAL.toBuilder().failures(3).lastFailureAt(now - 2_000).build(),
                Duration.ofHours(1));
        for (int i = 0; i < 5; i++) {
            u.apply("catalog", AtomicOperation.failure(), POLICY, now - 30_000 + i);
        }
        u.apply("email", AtomicOperation.force(BreakerStatus.OPEN), POLICY, now - 120_000);
        u.apply("geo-lookup", AtomicOperation.force(BreakerStatus.HALF_OPEN), POLICY, now - 5_000);
        client.put("recommendations", BreakerState.INITIAL.toBuilder().failures(2).lastFailureAt(now - 1_000)
                .contributors(List.of(new Contribution("pod-a", 1, 40, now - 1_000),
                        new Contribution("pod-b", 1, 35, now - 3_000)))
                .build(), Duration.ofHours(1));
        client.put("accounts", BreakerState.INITIAL.toBuilder().mode(BreakerMode.METRICS_ONLY).build(),
                Duration.ofHours(1));
    }

    @Test
    @Order(1)
    void aBreakerOpenedThroughAnotherClientTurnsRedWithinASecondWithoutAReload() throws IOException {
        CircuitBreaker app = app();
        for (int i = 0; i < 5; i++) {
            assertThrows(IllegalStateException.class, () -> app.execute("search", () -> {
                throw new IllegalStateException("down");
            }));
        }
        long opened = System.nanoTime();
        waitFor("the search tile to turn OPEN", () -> "OPEN".equals(status(browser, "search")), 5_000);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - opened);
        System.out.println("dashboard: OPEN shown " + millis + " ms after the opening failure returned");
        assertTrue(millis < 1_000, "the tile turned red after " + millis + " ms");
        String colour = (String) browser.executeScript("return getComputedStyle(document.querySelector("
                + "'[data-operation=\"search\"]')).borderLeftColor");
        assertEquals("rgb(215, 25, 28)", colour, "an open tile is red");
        assertEquals(1L, browser.executeScript("return window.redeyeStats.snapshots"), "no reload: one snapshot");
        screenshot();
    }

    @Test
    @Order(2)
    void forceOpenFromThePageOpensTheBreakerForASecondClient() {
        CircuitBreaker second = app();
        second.execute("inventory", () -> "ok");
        WebElement token = browser.findElement(By.id("token"));
        token.clear();
        token.sendKeys(TOKEN);
        click("inventory", "force-open");
        waitFor("the action's answer", () -> "false".equals(browser.findElement(By.id("action-message"))
                .getAttribute("data-failed")), 5_000);
        waitFor("the second client to reject inventory", () -> {
            try {
                second.execute("inventory", () -> "ok");
                return false;
            } catch (CircuitOpenException e) {
                return true;
            }
        }, 5_000);
        assertTrue(backend.get("inventory").orElseThrow().forced());
        waitFor("the inventory tile to show FORCED_OPEN", () -> "FORCED_OPEN".equals(status(browser, "inventory")),
                5_000);
    }

    @Test
    @Order(3)
    void aWrongTokenIsRefusedAndChangesNothing() {
        long before = backend.get("shipping").orElseThrow().version();
        WebElement token = browser.findElement(By.id("token"));
        token.clear();
        token.sendKeys("not-the-token");
        click("shipping", "force-open");
        waitFor("the refusal", () -> "true".equals(browser.findElement(By.id("action-message"))
                .getAttribute("data-failed")), 5_000);
        String message = browser.findElement(By.id("action-message")).getText();
        assertTrue(message.contains("403") && message.contains("wrong token"), message);
        BreakerState after = backend.get("shipping").orElseThrow();
        assertFalse(after.forced());
        assertEquals(before, after.version());
        assertEquals("CLOSED", status(browser, "shipping"));
    }

    @Test
    @Order(4)
    void aBrowserWhoseStreamDropsGetsTheCurrentStatesBack() {
        int port = server.port();
        server.close();
        waitFor("the page to see the stream drop", () -> "reconnecting".equals(
                browser.findElement(By.id("connection")).getText()), 10_000);
        app().forceOpen("billing");
        server = DashboardServer.start(view, "127.0.0.1", port, TOKEN, false);
        waitFor("the billing tile to show the change made while disconnected",
                () -> "FORCED_OPEN".equals(status(browser, "billing")), 10_000);
        assertEquals(2L, browser.executeScript("return window.redeyeStats.snapshots"), "the reconnect's snapshot");
        assertEquals("live", browser.findElement(By.id("connection")).getText());
    }

    @Test
    @Order(5)
    void thousandOperationsAtTwentyTransitionsASecondRenderWithinBudget() throws Exception {
        Store writer = backend.newClient();
        closing.add(writer);
        for (int i = 0; i < LOAD_OPERATIONS; i++) {
            writer.put(load(i), BreakerState.INITIAL, Duration.ofHours(1));
        }
        view.refreshNow();
        int total = view.tiles().size();
        assertTrue(total >= LOAD_OPERATIONS + 9, "tiles: " + total);
        waitFor("every tile", () -> tileCount(browser) == total, 20_000);
        assertEquals(1, server.openStreams(), "one event stream for the page");
        browser.executeScript("var s = window.redeyeStats; s.renders = 0; s.renderMillis = 0; "
                + "s.maxRenderMillis = 0; s.transitions = 0;");
        AtomicUpdates u = writer.capability(AtomicUpdates.class).orElseThrow();
        int transitions = 200;
        long start = System.nanoTime();
        for (int i = 0; i < transitions; i++) {
            // 20 a second: force open, then reset, spread over the operations
            String op = load((i * 37) % LOAD_OPERATIONS);
            boolean open = backend.get(op).map(BreakerState::forced).orElse(false);
            u.apply(op, AtomicOperation.force(open ? BreakerStatus.CLOSED : BreakerStatus.OPEN), POLICY,
                    System.currentTimeMillis());
            long due = start + TimeUnit.MILLISECONDS.toNanos(50L * (i + 1));
            long wait = due - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
        }
        waitFor("every transition in the page", () -> ((Number) browser.executeScript(
                "return window.redeyeStats.transitions")).intValue() >= transitions, 10_000);
        @SuppressWarnings("unchecked")
        Map<String, Object> stats = (Map<String, Object>) browser.executeScript("return window.redeyeStats");
        long renders = ((Number) stats.get("renders")).longValue();
        double millis = ((Number) stats.get("renderMillis")).doubleValue();
        double max = ((Number) stats.get("maxRenderMillis")).doubleValue();
        double mean = millis / Math.max(1, renders);
        System.out.printf("dashboard: %d tiles, %d transitions in %.1f s: %d frames rendered, mean %.2f ms, "
                + "max %.2f ms, %.1f %% of the time rendering%n", total, transitions,
                (System.nanoTime() - start) / 1e9, renders, mean, max, 100 * millis / ((System.nanoTime() - start) / 1e6));
        assertTrue(mean < 50, "mean render " + mean + " ms");
        assertTrue(max < 500, "longest render " + max + " ms");
        String last = load(((transitions - 1) * 37) % LOAD_OPERATIONS);
        BreakerState stored = backend.get(last).orElseThrow();
        assertEquals(stored.forced() ? "FORCED_OPEN" : "CLOSED", status(browser, last));
    }

    @Test
    @Order(6)
    void theServersStoreReadsDoNotGrowWithTheNumberOfBrowsers() throws Exception {
        CountingStore.Counts one = phase("one browser");
        CountingStore.Counts beforeJoin = serverStore.snapshot();
        for (int i = 0; i < 2; i++) {
            ChromeDriver b = Chromium.start();
            more.add(b);
            b.get(server.url());
        }
        int total = view.tiles().size();
        for (ChromeDriver b : more) {
            waitFor("every tile in another browser", () -> tileCount(b) == total, 20_000);
        }
        assertEquals(3, server.openStreams(), "one event stream per browser");
        assertEquals(0, serverStore.snapshot().minus(beforeJoin).reads(), "two more browsers joined without a read");
        CountingStore.Counts three = phase("three browsers");
        System.out.println("dashboard: store reads of one phase (3 refreshes, 20 transitions): " + one.reads()
                + " with 1 browser, " + three.reads() + " with 3");
        assertEquals(one.reads(), three.reads(), "store reads with 1 browser and with 3");
        assertEquals(0, one.get(dev.redeye.spi.StoreOperation.GET), "the listing carries the states: no get");
        assertEquals(0, three.writes(), "the view writes nothing");
    }

    /** Three refreshes and 20 transitions; the server's store operations meanwhile. */
    private CountingStore.Counts phase(String what) throws Exception {
        CircuitBreaker app = app();
        CountingStore.Counts before = serverStore.snapshot();
        for (int i = 0; i < 20; i++) {
            if (i % 2 == 0) {
                app.forceOpen(load(500 + i));
            } else {
                app.reset(load(500 + i - 1));
            }
            if (i % 7 == 0) {
                view.refreshNow();
            }
        }
        waitFor(what + ": the last reset shown", () -> "CLOSED".equals(status(browser, load(518))), 5_000);
        return serverStore.snapshot().minus(before);
    }

    private CircuitBreaker app() {
        CircuitBreaker b = CircuitBreaker.builder().store(backend.newClient()).failureThreshold(5)
                .resetTimeout(Duration.ofSeconds(60)).build();
        closing.add(b);
        return b;
    }

    private static String load(int i) {
        return String.format("load-%04d", i);
    }

    private void click(String operation, String action) {
        WebElement button = browser.findElement(By.cssSelector("[data-operation=\"" + operation
                + "\"] button[data-action=\"" + action + "\"]"));
        browser.executeScript("arguments[0].scrollIntoView({block: 'center'})", button);
        button.click();
    }

    private static String status(ChromeDriver b, String operation) {
        return (String) b.executeScript("var e = document.querySelector('[data-operation=\"' + arguments[0] + '\"]');"
                + " return e ? e.getAttribute('data-status') : null;", operation);
    }

    private static int tileCount(ChromeDriver b) {
        return ((Number) b.executeScript("return document.querySelectorAll('#tiles .tile').length")).intValue();
    }

    static void waitFor(String what, BooleanSupplier condition, long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + millis + " ms waiting for " + what);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** The page as it looks now: target/dashboard.png, and docs/dashboard.png when asked to write it. */
    private void screenshot() throws IOException {
        Path shot = browser.getScreenshotAs(OutputType.FILE).toPath();
        Path target = Paths.get("target", "dashboard.png");
        Files.copy(shot, target, StandardCopyOption.REPLACE_EXISTING);
        if (Boolean.getBoolean("redeye.screenshot.write")) {
            Files.copy(shot, Paths.get("..", "docs", "dashboard.png"), StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
