package org.pageio.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The settings form's cross-site rule: a POST whose Origin (else Referer) names another host or port is refused. */
class PageioPluginTest {

    @Test
    void aPostFromThisConsolesOwnPageIsAccepted() {
        assertNull(PageioPlugin.crossSite("http://127.0.0.1:8080", null, "http", "127.0.0.1:8080"));
        assertNull(PageioPlugin.crossSite(null, "http://127.0.0.1:8080/system/console/pageio", "http", "127.0.0.1:8080"));
        assertNull(PageioPlugin.crossSite("http://LOCALHOST", null, "http", "localhost:80"), "default port, any case");
        assertNull(PageioPlugin.crossSite("https://console.example", null, "https", "console.example:443"));
        assertNull(PageioPlugin.crossSite("http://[::1]:8080", null, "http", "[::1]:8080"));
        assertNull(PageioPlugin.crossSite(null, null, "http", "127.0.0.1:8080"), "curl: no browser headers, the token decides");
    }

    @Test
    void aPostFromAnotherSiteIsRefusedNamingWhereItCameFrom() {
        String m = PageioPlugin.crossSite("http://evil.example", null, "http", "127.0.0.1:8080");
        assertEquals("it was sent from another site (Origin: http://evil.example; this console is 127.0.0.1:8080): a page"
                + " elsewhere cannot change settings with your credentials; use the form on this page", m);
        assertTrue(PageioPlugin.crossSite("http://127.0.0.1:9999", null, "http", "127.0.0.1:8080").contains("Origin: "),
                "another port is another origin");
        assertTrue(PageioPlugin.crossSite("null", null, "http", "127.0.0.1:8080").contains("Origin: null"),
                "a sandboxed page");
        assertTrue(PageioPlugin.crossSite(null, "http://evil.example/page.html", "http", "127.0.0.1:8080")
                .contains("Referer: http://evil.example/page.html"));
        assertTrue(PageioPlugin.crossSite("http://evil.example", "http://127.0.0.1:8080/system/console/pageio", "http",
                "127.0.0.1:8080") != null, "the Origin decides when there is one");
        assertTrue(PageioPlugin.crossSite("http://127.0.0.1.evil.example:8080", null, "http", "127.0.0.1:8080") != null);
    }
}
