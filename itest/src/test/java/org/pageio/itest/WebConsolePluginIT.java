package org.pageio.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;

import org.junit.BeforeClass;
import org.junit.Test;
import org.pageio.itest.kit.ConsoleShell;
import org.pageio.itest.kit.ExportedJar;
import org.pageio.itest.kit.ExportedJar.Run;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * On the exported container {@code app/target/pageio.jar}: a value set with
 * {@code pageio:set} survives a restart (it is saved in the settings file), and the Web Console's
 * {@code pageio} page in a real browser — Debian's chromium driven by Selenium through
 * {@code /usr/bin/chromedriver}: it logs in with the generated password, sees the method in use,
 * the stat_io table after a scan, the live aios view refreshing, the live chart's reads/s at 0 before
 * the scan and above 0 after it, the newest drill result (a real drill's Markdown as tables, the page no wider
 * than a 1280-px window), and an
 * invalid setting refused with the old value kept, and a settings POST forged as another site's page would
 * send it (another Origin or Referer, no form token) refused with 403. Screenshots go to {@code itest/target/}.
 * Plain JUnit, no Pax Exam. Fails (never skips) when chromium or the jar is missing.
 */
public class WebConsolePluginIT {

    static final String CHROMIUM = "/usr/bin/chromium";
    static final String CHROMEDRIVER = "/usr/bin/chromedriver";

    private static ExportedJar jar;
    private static Path target;

    @BeforeClass
    public static void findJarAndBrowser() {
        jar = ExportedJar.require();
        if (!new File(CHROMIUM).canExecute() || !new File(CHROMEDRIVER).canExecute()) {
            fail("the browser test needs Debian's chromium and chromium-driver (" + CHROMIUM + ", " + CHROMEDRIVER
                    + "): apt-get install -y chromium chromium-driver (.ci/run installs them)");
        }
        target = Path.of(PageioTestBase.dataDirectory()).getParent();
    }

    private static Path freshData(String name) throws IOException {
        return ConsoleShell.freshData(target, name);
    }

    private static Run exec(Path data, String script) throws Exception {
        return jar.exec(data, script);
    }

    /** A value set with pageio:set is saved in the settings file and in force after a restart. */
    @Test
    public void setSurvivesARestart() throws Exception {
        Path data = freshData("pageio-restart-data");
        Run first = exec(data, "pageio:set effective_io_concurrency 40; pageio:set io_max_workers 5");
        assertEquals("exit code; stderr: " + first.err(), 0, first.code());
        Path file = data.resolve("conf/org.pageio.settings.cfg");
        assertTrue(first.out(), first.out().contains("SET effective_io_concurrency = 40 (was 16); the buffer manager restarted;"
                + " saved in " + file));
        String saved = Files.readString(file);
        assertTrue(saved, saved.contains("\neffective_io_concurrency = 40\n") && saved.contains("\nio_max_workers = 5\n"));

        Run second = exec(data, "pageio:settings");
        assertEquals("exit code; stderr: " + second.err(), 0, second.code());
        assertTrue(second.out(), second.out().lines().anyMatch(l -> l.matches(
                "effective_io_concurrency +\\| 40 +\\| +\\| configuration file +\\| user +\\| restart +\\| 0\\.\\.1000")));
        assertTrue(second.out(), second.out().lines().anyMatch(l -> l.matches(
                "io_max_workers +\\| 5 +\\| +\\| configuration file +\\| sighup +\\| live .*")));

        // an invalid value in the file: refused on stderr at start, the saved value stays in force
        String edited = saved.replace("effective_io_concurrency = 40", "effective_io_concurrency = 40\n"
                + "io_combine_limit = 1GB");
        Files.writeString(file, edited);
        int line = edited.lines().toList().indexOf("io_combine_limit = 1GB") + 1;
        assertTrue(edited, line > 1);
        Run third = exec(data, "pageio:settings");
        assertEquals("a refused line fails the run; stderr: " + third.err(), 1, third.code());
        // the file and the line, as a compiler names them
        assertTrue(third.err(), third.err().contains("pageio: " + file + ":" + line + ": io_combine_limit = 1GB (131072 × 8kB) is outside"
                + " the valid range 1..128 (8kB), that is 8kB..1MB; io_combine_limit stays 16"));
        assertTrue(third.out(), third.out().lines().anyMatch(l -> l.matches("io_combine_limit +\\| 16 +\\| 8kB +\\| default .*")));
        assertTrue(third.out(), third.out().lines().anyMatch(l -> l.startsWith("effective_io_concurrency ") && l.contains("| 40 ")));
    }

    @Test
    public void pluginPageInChromium() throws Exception {
        Path data = freshData("pageio-web-data");
        // interactive Gogo shell reading our pipe: we type commands into it while the browser watches
        ConsoleShell shell = ConsoleShell.start(jar, data);
        int port = shell.port();
        Path profile = Files.createTempDirectory(target, "chromium-profile");
        WebDriver browser = null;
        try {
            String base = "http://127.0.0.1:" + port + "/system/console";
            String password = shell.awaitConsole("/system/console/pageio");
            // the console may answer before the table commands are registered: retry until they are
            shell.command("pageio:load --rows 20000 t", "loaded 20,000 rows into t");

            ChromeOptions options = new ChromeOptions();
            options.setBinary(CHROMIUM);
            options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=1400,2200", "--user-data-dir=" + profile);
            ChromeDriverService service = new ChromeDriverService.Builder()
                    .usingDriverExecutable(new File(CHROMEDRIVER)).usingAnyFreePort().build();
            browser = new ChromeDriver(service, options);
            WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(30));
            wait.ignoring(StaleElementReferenceException.class); // the page re-renders what it refreshes

            // log in once with the credentials in the URL, then use the plain URL (Basic auth is cached)
            browser.get("http://admin:" + password + "@127.0.0.1:" + port + "/system/console/bundles");
            browser.get("http://127.0.0.1:" + port + "/system/console/pageio");
            wait.until(d -> !d.findElements(By.id("pageio-method")).isEmpty());
            assertTrue(browser.getTitle(), browser.getTitle().contains("pageio I/O"));
            assertEquals("worker", browser.findElement(By.id("pageio-method")).getText());
            // huge_pages_status: the default (try) gives the pool 2 MB pages where the kernel allows them
            String huge = browser.findElement(By.id("pageio-huge-pages")).getText();
            java.nio.file.Path thp = java.nio.file.Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
            boolean thpAllowed = java.nio.file.Files.exists(thp) && !java.nio.file.Files.readString(thp).contains("[never]");
            assertTrue(huge, thpAllowed ? huge.matches("on: (\\d+) MB of \\1 MB in 2 MB pages") : huge.startsWith("off: "));
            String methods = browser.findElement(By.id("pageio-methods")).getText();
            assertTrue(methods, methods.contains("io_uring") && methods.contains("sync") && methods.contains("worker"));
            String statHead = browser.findElement(By.id("pageio-stat-io")).getText();
            assertTrue(statHead, statHead.contains("io_method") && statHead.contains("stats_reset")
                    && statHead.contains("bytes_per_read"));
            assertEquals("no drill run yet", browser.findElement(By.id("pageio-drill")).getText());
            // the live chart takes a sample a poll; nothing reads before the scan, so reads/s stays 0
            wait.until(d -> Integer.parseInt(d.findElement(By.id("pageio-chart")).getAttribute("data-samples")) >= 2);
            assertEquals("0", browser.findElement(By.id("pageio-chart")).getAttribute("data-reads-max"));

            // a scan while the page polls: stat_io fills in without reloading, the live view refreshes
            shell.command("pageio:scan count t", "count t: count=20000");
            wait.until(d -> d.findElement(By.id("pageio-stat-io")).getText().contains("client"));
            String status = wait.until(d -> {
                String s = d.findElement(By.id("pageio-aios-status")).getText();
                return s.matches("\\(live: \\d+ in flight, refresh ([2-9]|\\d\\d+) at .*") ? s : null;
            });
            assertTrue(status, status.startsWith("(live: "));
            // the scan's reads move the chart: reads/s above 0, on the line of the method that read
            String readsMax = wait.until(d -> {
                String v = d.findElement(By.id("pageio-chart")).getAttribute("data-reads-max");
                return Double.parseDouble(v) > 0 ? v : null;
            });
            String top = browser.findElement(By.id("pageio-chart-reads-max")).getText();
            assertTrue(top + " vs " + readsMax, Double.parseDouble(top) > 0);
            String line = browser.findElement(By.cssSelector("#pageio-chart-reads polyline[data-method='worker']"))
                    .getAttribute("points");
            assertTrue(line, line.split(" ").length >= 2);
            assertTrue(browser.findElement(By.id("pageio-chart-legend")).getText().contains("worker"));
            assertTrue(Double.parseDouble(browser.findElement(By.id("pageio-chart-mb-max")).getText()) > 0);
            String stat = browser.findElement(By.id("pageio-stat-io")).getText();
            // the polled rows carry the method that did the reads and a timestamptz as PostgreSQL prints it
            assertTrue(stat, stat.lines().anyMatch(l -> l.startsWith("client") && l.contains(" relation ")
                    && l.contains(" worker ")
                    && l.matches(".* \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d(\\.\\d{1,6})?[+-]\\d\\d(:\\d\\d){0,2}( .*)?")));
            screenshot(browser, "webconsole-pageio.png");

            // an invalid value through the form: refused with the message, the old value stays
            new Select(browser.findElement(By.id("pageio-set-name"))).selectByValue("effective_io_concurrency");
            browser.findElement(By.id("pageio-set-value")).sendKeys("5000");
            browser.findElement(By.id("pageio-set-submit")).click();
            String outcome = wait.until(d -> d.findElements(By.id("pageio-outcome")).isEmpty() ? null
                    : d.findElement(By.id("pageio-outcome")).getAttribute("class") + ": "
                            + d.findElement(By.id("pageio-outcome")).getText());
            assertEquals("refused: effective_io_concurrency = 5000 is outside the valid range 0..1000;"
                    + " effective_io_concurrency stays 16", outcome);
            assertTrue(settingsRow(browser, "effective_io_concurrency"), settingsRow(browser, "effective_io_concurrency")
                    .startsWith("effective_io_concurrency 16 default"));
            screenshot(browser, "webconsole-pageio-refused.png");

            // a valid one: applied live, shown with source console, saved in the file
            new Select(browser.findElement(By.id("pageio-set-name"))).selectByValue("io_max_workers");
            browser.findElement(By.id("pageio-set-value")).sendKeys("9");
            browser.findElement(By.id("pageio-set-submit")).click();
            String applied = wait.until(d -> {
                String text = d.findElement(By.id("pageio-outcome")).getText();
                return text.startsWith("SET io_max_workers = 9 (was 8)") ? d.findElement(By.id("pageio-outcome"))
                        .getAttribute("class") + ": " + text : null;
            });
            assertTrue(applied, applied.startsWith("ok: SET io_max_workers = 9 (was 8)"));
            assertTrue(settingsRow(browser, "io_max_workers"), settingsRow(browser, "io_max_workers")
                    .startsWith("io_max_workers 9 console"));
            assertTrue(Files.readString(data.resolve("conf/org.pageio.settings.cfg")).contains("\nio_max_workers = 9\n"));

            // forged POSTs, as another site's page would send them with the browser's cached credentials:
            // 403, nothing changes; the same POST from this console's page with its form token is taken
            String page = http(base + "/pageio", password, null, null, null).body();
            java.util.regex.Matcher tm = java.util.regex.Pattern.compile("name='pageio-token' value='([^']+)'").matcher(page);
            assertTrue(page, tm.find());
            String token = tm.group(1);
            String own = "http://127.0.0.1:" + port;
            String form = "name=io_max_workers&value=3&pageio-token=" + token;
            HttpResponse<String> evil = http(base + "/pageio", password, form, "http://evil.example", null);
            assertEquals(evil.body(), 403, evil.statusCode());
            assertTrue(evil.body(), evil.body().contains("settings change refused: it was sent from another site"
                    + " (Origin: http://evil.example; this console is 127.0.0.1:" + port + ")"));
            HttpResponse<String> viaReferer = http(base + "/pageio", password, form, null, "http://evil.example/form.html");
            assertEquals(viaReferer.body(), 403, viaReferer.statusCode());
            HttpResponse<String> noToken = http(base + "/pageio", password, "name=io_max_workers&value=3", own, null);
            assertEquals(noToken.body(), 403, noToken.statusCode());
            assertTrue(noToken.body(), noToken.body().contains("token is missing or out of date")); // the error page escapes '
            HttpResponse<String> wrongToken = http(base + "/pageio", password, form.replace(token, "x" + token), own, null);
            assertEquals(wrongToken.body(), 403, wrongToken.statusCode());
            String cfg = Files.readString(data.resolve("conf/org.pageio.settings.cfg"));
            assertTrue(cfg, cfg.contains("\nio_max_workers = 9\n") && !cfg.contains("io_max_workers = 3"));
            browser.get("http://127.0.0.1:" + port + "/system/console/pageio");
            wait.until(d -> !d.findElements(By.id("pageio-settings")).isEmpty());
            assertTrue(settingsRow(browser, "io_max_workers"), settingsRow(browser, "io_max_workers")
                    .startsWith("io_max_workers 9 console"));
            HttpResponse<String> ownPage = http(base + "/pageio", password, form, own, null);
            assertEquals(200, ownPage.statusCode());
            assertTrue(ownPage.body(), ownPage.body().contains("SET io_max_workers = 3 (was 9)"));

            // the newest drill result: a real drill's Markdown (web-bundle's test fixture), as tables within the window
            Path results = Files.createDirectories(data.resolve("drill-results"));
            Path fixture = target.getParent().resolveSibling("web-bundle")
                    .resolve("src/test/resources/org/pageio/web/drill-result.md");
            Files.copy(fixture, results.resolve("20260101-000000.md"));
            Files.writeString(results.resolve("20260101-000000.svg"), "<svg xmlns='http://www.w3.org/2000/svg' width='120'"
                    + " height='40'><rect width='100' height='20' fill='#36c'/></svg>");
            browser.manage().window().setSize(new org.openqa.selenium.Dimension(1280, 2200));
            browser.get("http://127.0.0.1:" + port + "/system/console/pageio");
            String drill = wait.until(d -> d.findElement(By.id("pageio-drill"))).getText();
            assertTrue(drill, drill.contains("For this storage, choose io_method="));
            List<WebElement> drillTables = browser.findElements(By.cssSelector("#pageio-drill table"));
            assertEquals(11, drillTables.size());
            assertEquals(List.of("method", "execution ms", "I/O wait ms"), drillTables.get(0)
                    .findElements(By.tagName("th")).stream().limit(3).map(WebElement::getText).toList());
            assertEquals("sync", drillTables.get(0).findElement(By.cssSelector("tbody td")).getText());
            assertTrue("no preformatted text", browser.findElements(By.cssSelector("#pageio-drill pre")).isEmpty());
            org.openqa.selenium.JavascriptExecutor js = (org.openqa.selenium.JavascriptExecutor) browser;
            Number width = (Number) js.executeScript(
                    "var i = document.querySelector('#pageio-drill img'); return i && i.complete ? i.naturalWidth : -1;");
            assertEquals("the drill chart loads", 120L, width.longValue());
            String widths = String.valueOf(js.executeScript("return document.documentElement.scrollWidth + ' ' + "
                    + "document.documentElement.clientWidth + ' ' + [].filter.call(document.querySelectorAll('#pageio-drill .pageio-wide'),"
                    + " function (d) { return d.scrollWidth > d.clientWidth; }).length"));
            js.executeScript("document.getElementById('pageio-drill').scrollIntoView()");
            screenshot(browser, "webconsole-pageio-drill.png");
            String[] w = widths.split(" ");
            assertTrue("the page (" + w[0] + " px) is not wider than the window (" + w[1] + " px inside)",
                    Integer.parseInt(w[0]) <= Integer.parseInt(w[1]));
            assertEquals("drill tables that had to scroll instead of wrapping their cells", "0", w[2]);
            System.out.println("---- stat_io as the page showed it\n" + stat);
        } catch (RuntimeException | AssertionError e) {
            if (browser != null) {
                screenshot(browser, "webconsole-pageio-failure.png");
            }
            throw new AssertionError(e.getMessage() + "\n---- container log:\n" + shell.log(), e);
        } finally {
            if (browser != null) {
                browser.quit();
            }
            shell.close();
        }
    }

    private static HttpResponse<String> http(String url, String password, String form, String origin, String referer)
            throws Exception {
        return ConsoleShell.http(url, password, form, origin, referer);
    }

    /** The settings table's row as the browser shows it, cells joined by single spaces. */
    private static String settingsRow(WebDriver browser, String name) {
        for (int attempt = 0;; attempt++) {
            try {
                for (WebElement tr : browser.findElements(By.cssSelector("#pageio-settings tbody tr"))) {
                    List<WebElement> cells = tr.findElements(By.tagName("td"));
                    if (cells.get(0).getText().equals(name)) {
                        return cells.get(0).getText() + " " + cells.get(1).getText() + " " + cells.get(3).getText();
                    }
                }
                return "(no row " + name + ")";
            } catch (StaleElementReferenceException e) {
                if (attempt == 20) {
                    throw e; // re-rendered under us twenty times running
                }
            }
        }
    }

    private static void screenshot(WebDriver browser, String name) throws IOException {
        File shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
        Path to = target.resolve(name);
        Files.copy(shot.toPath(), to, StandardCopyOption.REPLACE_EXISTING);
        assertTrue(to + " is empty", Files.size(to) > 1000);
        System.out.println("screenshot: " + to);
    }
}
