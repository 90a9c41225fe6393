package org.pageio.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Dictionary;

import jakarta.servlet.Servlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.bufmgr.BufferManager;
import org.pageio.settings.SettingsService;

/**
 * {@code GET /metrics}: {@link PageioMetrics} in Prometheus' text format, on the container's HTTP
 * service (a servlet of the HTTP Whiteboard, beside the Web Console), for the Web Console's user
 * and password only (HTTP basic).
 *
 * <p>Credentials are checked against the Web Console's own configuration ({@code OsgiManager}'s
 * {@code username} and salted {@code password} hash, which {@link WebConsoleCredentials} writes),
 * read at each request: a password changed there applies here at once. Without that configuration,
 * or with a password that is not a salted hash, every request is refused, so {@code admin/admin}
 * never works here either. The buffer manager is looked up per request (get/unget), as the Web
 * Console page does. Requests run on Jetty's threads; the servlet holds no state.
 */
@Component(service = Servlet.class, property = {
        "osgi.http.whiteboard.servlet.pattern=" + MetricsServlet.PATH,
        "osgi.http.whiteboard.servlet.name=pageio metrics"
})
public final class MetricsServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    /** Where the metrics are served. */
    public static final String PATH = "/metrics";
    /** The realm a refused request is asked to authenticate in. */
    static final String REALM = "pageio metrics";

    private final transient ConfigurationAdmin configAdmin;
    private final transient BundleContext context;

    @Activate
    public MetricsServlet(@Reference ConfigurationAdmin configAdmin, BundleContext context) {
        this.configAdmin = configAdmin;
        this.context = context;
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (!allowed(req.getHeader("Authorization"), SettingsService.stored(configAdmin, WebConsoleCredentials.PID))) {
            resp.setHeader("WWW-Authenticate", "Basic realm=\"" + REALM + "\", charset=\"UTF-8\"");
            resp.sendError(HttpServletResponse.SC_UNAUTHORIZED, "pageio: /metrics needs the Web Console's user and password");
            return;
        }
        String body;
        ServiceReference<BufferManager> ref = context.getServiceReference(BufferManager.class);
        BufferManager b = ref == null ? null : context.getService(ref);
        try {
            body = PageioMetrics.scrape(SettingsService.whyNotRunning(b) == null ? b : null);
        } finally {
            if (b != null) {
                context.ungetService(ref);
            }
        }
        resp.setHeader("Cache-Control", "no-store");
        resp.setContentType(PageioMetrics.CONTENT_TYPE);
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        resp.setContentLength(bytes.length);
        resp.getOutputStream().write(bytes);
    }

    /**
     * Whether {@code authorization} (the request's header) carries the user and password of the Web
     * Console configured in {@code console}: Basic, the configured {@code username} (default
     * {@value WebConsoleCredentials#USERNAME}), a password whose salted hash is the configured
     * {@code password}. Null or missing parts: no.
     */
    static boolean allowed(String authorization, Dictionary<String, ?> console) {
        if (authorization == null || console == null || !authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
            return false;
        }
        String pair;
        try {
            pair = new String(Base64.getDecoder().decode(authorization.substring(6).strip()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return false;
        }
        int colon = pair.indexOf(':');
        if (colon < 0) {
            return false;
        }
        Object u = console.get("username");
        String user = u instanceof String s && !s.isEmpty() ? s : WebConsoleCredentials.USERNAME;
        boolean userOk = MessageDigest.isEqual(user.getBytes(StandardCharsets.UTF_8),
                pair.substring(0, colon).getBytes(StandardCharsets.UTF_8));
        boolean passwordOk = WebConsolePassword.matches(console.get("password"), pair.substring(colon + 1));
        return userOk & passwordOk;
    }
}
