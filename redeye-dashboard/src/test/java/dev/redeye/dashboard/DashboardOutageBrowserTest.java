package dev.redeye.dashboard;

import static dev.redeye.dashboard.DashboardBrowserTest.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.OpenMode;
import dev.redeye.Stores;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.Store;
import dev.redeye.testsupport.RedisProcess;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.chrome.ChromeDriver;

/**
 * The store killed and restarted under an open page: a private redis-server (its own port, started and killed
 * by pid, AOF on so that the states survive the restart), a dashboard over it (which lists the operations: the
 * Redis store offers a listing, so the names it is given are not needed), and headless Chromium. The page shows the outage while the server is gone and
 * recovers without a reload when it is back, the feed included: a transition made after the restart reaches the
 * page's tile and its timeline.
 */
class DashboardOutageBrowserTest {

    @Test
    void aStoreKilledAndRestartedShowsTheOutageAndRecovers() {
        Policy policy = Policy.builder().failureThreshold(3).jitter(0.0).build();
        try (RedisProcess redis = RedisProcess.start("--appendonly", "yes", "--appendfsync", "always")) {
            String uri = redis.url() + "?prefix=dash:";
            try (Store writer = Stores.open(uri, OpenMode.STRICT);
                    Store serverStore = Stores.open(uri, OpenMode.STRICT)) {
                writer.put("orders", BreakerState.INITIAL, Duration.ofHours(1));
                writer.put("payments", BreakerState.INITIAL.toBuilder().failures(2).build(), Duration.ofHours(1));
                try (FleetView view = new FleetView(serverStore, policy, List.of("orders", "payments"),
                        Duration.ofMillis(500), Clock.systemUTC())) {
                    view.start();
                    try (DashboardServer server = DashboardServer.start(view, "127.0.0.1", 0, "t", false)) {
                        ChromeDriver browser = Chromium.start();
                        try {
                            browser.get(server.url());
                            waitFor("both tiles", () -> count(browser) == 2, 15_000);
                            assertEquals("up", storeState(browser));

                            redis.kill();
                            waitFor("the outage banner", () -> "down".equals(storeState(browser)), 15_000);
                            String banner = browser.findElement(By.id("store-banner")).getText();
                            assertTrue(banner.startsWith("Store unavailable"), banner);
                            assertEquals(2, count(browser), "the last states read stay shown");

                            redis.restart();
                            waitFor("the store back", () -> "up".equals(storeState(browser)), 20_000);
                            assertTrue(browser.findElement(By.id("store-banner")).getAttribute("class")
                                    .contains("hidden"));
                            AtomicUpdates u = writer.capability(AtomicUpdates.class).orElseThrow();
                            // the feed resubscribes with backoff: a transition made after that reaches the timeline
                            waitFor("a transition after the restart in the timeline", () -> {
                                if (!"FORCED_OPEN".equals(status(browser, "orders"))) {
                                    u.apply("orders", AtomicOperation.force(BreakerStatus.OPEN), policy,
                                            System.currentTimeMillis());
                                }
                                return timelineHas(browser, "orders");
                            }, 30_000);
                            assertEquals("FORCED_OPEN", status(browser, "orders"));
                            assertEquals(1L, browser.executeScript("return window.redeyeStats.snapshots"),
                                    "no reload, and the page's own stream never dropped");
                        } finally {
                            browser.quit();
                        }
                    }
                }
            }
        }
    }

    private static int count(ChromeDriver b) {
        return ((Number) b.executeScript("return document.querySelectorAll('#tiles .tile').length")).intValue();
    }

    private static String storeState(ChromeDriver b) {
        return (String) b.executeScript("return document.body.getAttribute('data-store')");
    }

    private static String status(ChromeDriver b, String op) {
        return (String) b.executeScript("var e = document.querySelector('[data-operation=\"' + arguments[0] + '\"]');"
                + " return e ? e.getAttribute('data-status') : null;", op);
    }

    private static boolean timelineHas(ChromeDriver b, String op) {
        return (Boolean) b.executeScript("var op = arguments[0]; return Array.from(document.querySelectorAll("
                + "'#timeline li')).some(function (li) { return li.textContent.indexOf(op) >= 0; })", op);
    }
}
