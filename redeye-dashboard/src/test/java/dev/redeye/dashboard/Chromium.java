package dev.redeye.dashboard;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.time.Duration;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Headless Chromium for the browser tests: Debian's {@code chromium} and {@code chromium-driver}
 * ({@code REDEYE_CHROMIUM} and {@code REDEYE_CHROMEDRIVER}, which scripts/services.sh exports, else
 * {@code /usr/bin/chromium} and {@code /usr/bin/chromedriver}). Selenium is given both paths, so Selenium Manager
 * downloads nothing; a missing one fails the test saying how to install it.
 */
final class Chromium {
    private Chromium() {
    }

    static String path(String env, String fallback) {
        String p = System.getenv(env);
        return p == null || p.isBlank() ? fallback : p.trim();
    }

    /** A new headless browser with a 1400 x 900 window; the caller quits it. */
    static ChromeDriver start() {
        String browser = path("REDEYE_CHROMIUM", "/usr/bin/chromium");
        String driver = path("REDEYE_CHROMEDRIVER", "/usr/bin/chromedriver");
        if (!new File(browser).canExecute() || !new File(driver).canExecute()) {
            fail("No Chromium: " + browser + " or " + driver + " is missing. Run scripts/test.sh (it installs "
                    + "Debian's chromium and chromium-driver), or apt-get install -y chromium chromium-driver, or set "
                    + "REDEYE_CHROMIUM and REDEYE_CHROMEDRIVER");
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(browser);
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,900", "--force-device-scale-factor=1");
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(driver)).usingAnyFreePort().build();
        ChromeDriver d = new ChromeDriver(service, options);
        d.manage().timeouts().scriptTimeout(Duration.ofSeconds(30));
        return d;
    }
}
