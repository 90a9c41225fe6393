package org.pageio.web;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Stream;

import jakarta.servlet.Servlet;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.apache.felix.webconsole.servlet.AbstractServlet;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.pageio.bufmgr.BufferManager;
import org.pageio.report.Json;
import org.pageio.report.TextTable;
import org.pageio.settings.DataDirectory;
import org.pageio.settings.SettingsService;
import org.pageio.settings.MethodsTable;
import org.pageio.report.StatViews;

/**
 * The Web Console's {@code pageio} page ({@code /system/console/pageio}): the I/O method in use and
 * those registered (with the cause when one cannot run here), the settings with their sources and
 * an edit form that goes through {@code pageio:set}'s validation, {@code pg_stat_io} with bytes per
 * read, a live {@code pg_aios} view (the page polls {@code pageio/live.json} every
 * {@value #POLL_MS} ms), a live chart of reads/s, MB/s, I/O wait and handles in flight per I/O
 * method that the page derives from the same polls, and the newest drill result: its chart and its
 * Markdown as the page's tables ({@link DrillMarkdown}).
 *
 * <p>It shows the tables the shell shows ({@link MethodsTable#table()},
 * {@link SettingsService#table()}, {@link StatViews#statIoTable}), so the page and the shell
 * always agree. Requests run on Jetty's threads; the page holds no state. The buffer manager is
 * looked up per request (get/unget), not bound: a bound greedy reference would activate it inside
 * the registration event, delaying the services that wait for it (the exec runner saw them late).
 */
@Component(service = Servlet.class, property = {
        "felix.webconsole.label=" + PageioPlugin.LABEL,
        "felix.webconsole.title=pageio I/O",
        "felix.webconsole.category=pageio"
})
public final class PageioPlugin extends AbstractServlet {

    private static final long serialVersionUID = 1L;

    public static final String LABEL = "pageio";
    static final int POLL_MS = 1000;
    /** Samples the live chart keeps: five minutes at one a poll. */
    static final int CHART_SAMPLES = 300;
    static final int CHART_WIDTH = 600;
    static final int CHART_HEIGHT = 80;
    /** Request attribute: the outcome of a POSTed setting, rendered above the settings table. */
    private static final String OUTCOME = PageioPlugin.class.getName() + ".outcome";
    /** The settings form's token parameter. */
    static final String TOKEN = "pageio-token";

    private final transient MethodsTable methods;
    private final transient SettingsService settings;
    private final transient BundleContext context;
    /**
     * The settings form's token: random, one per activation of the page, embedded in the form and
     * required on every POST. Another site's page cannot read it (the browser's same-origin rule),
     * so it cannot build a POST that passes.
     */
    private final transient String token;

    @Activate
    public PageioPlugin(@Reference MethodsTable methods, @Reference SettingsService settings, BundleContext context) {
        this.methods = methods;
        this.settings = settings;
        this.context = context;
        byte[] random = new byte[24];
        new SecureRandom().nextBytes(random);
        this.token = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
    }

    record Outcome(boolean ok, String message) {}

    // ------------------------------------------------------------------ requests

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
        String path = req.getPathInfo() == null ? "" : req.getPathInfo();
        if (path.endsWith("/live.json")) {
            AbstractServlet.setNoCache(resp);
            resp.setContentType("application/json");
            resp.setCharacterEncoding("UTF-8");
            resp.getWriter().write(liveJson());
            return;
        }
        if (path.endsWith("/drill.svg")) {
            Optional<Path> svg = newestDrill(".svg");
            if (svg.isEmpty()) {
                resp.sendError(HttpServletResponse.SC_NOT_FOUND, "no drill run yet");
                return;
            }
            AbstractServlet.setNoCache(resp);
            resp.setContentType("image/svg+xml");
            resp.getOutputStream().write(Files.readAllBytes(svg.get()));
            return;
        }
        super.doGet(req, resp); // resources under /res/, else the console renders the page (renderContent)
    }

    /**
     * The settings form: the same validation as {@code pageio:set}; the page then shows the outcome.
     * A request another site's page could have sent with the browser's cached credentials (an
     * {@code Origin}, or without one a {@code Referer}, of another host, or no valid form token) is
     * refused with 403 before anything changes.
     */
    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
        String forged = crossSite(req.getHeader("Origin"), req.getHeader("Referer"), req.getScheme(),
                req.getHeader("Host") != null ? req.getHeader("Host") : req.getServerName() + ":" + req.getServerPort());
        if (forged == null && !validToken(req.getParameter(TOKEN))) {
            forged = "the form's token is missing or out of date (the console restarted since the page was loaded):"
                    + " reload the page and set it again";
        }
        if (forged != null) {
            resp.sendError(HttpServletResponse.SC_FORBIDDEN, "pageio: settings change refused: " + forged);
            return;
        }
        String name = req.getParameter("name");
        String value = req.getParameter("value");
        Outcome outcome;
        if (name == null || name.isBlank() || value == null) {
            outcome = new Outcome(false, "choose a setting and give a value");
        } else {
            try {
                outcome = new Outcome(true, settings.setFrom("Web Console", name.strip(), value));
            } catch (IllegalArgumentException | IOException | IllegalStateException e) {
                outcome = new Outcome(false, e.getMessage());
            }
        }
        req.setAttribute(OUTCOME, outcome);
        // No response here: the console then renders the page (renderContent) with the outcome.
    }

    /** Whether {@code given} is this page's form token (compared in constant time). */
    private boolean validToken(String given) {
        return given != null && MessageDigest.isEqual(token.getBytes(StandardCharsets.US_ASCII),
                given.getBytes(StandardCharsets.US_ASCII));
    }

    /**
     * Why a state-changing request is not from this console's own page, or null when it may be:
     * its {@code Origin} (else its {@code Referer}) names another host or port than the request's
     * own ({@code scheme} and {@code host}, the {@code Host} header). A request with neither header
     * (curl, a script) is not a browser sending another site's form; the form token still applies.
     */
    static String crossSite(String origin, String referer, String scheme, String host) {
        String header = origin != null ? "Origin" : "Referer";
        String from = origin != null ? origin : referer;
        if (from == null) {
            return null;
        }
        String own = authority(scheme, host);
        String theirs = null;
        try {
            URI u = new URI(from.strip());
            if (u.getHost() != null) {
                theirs = authority(u.getScheme(), u.getHost() + (u.getPort() < 0 ? "" : ":" + u.getPort()));
            }
        } catch (URISyntaxException e) {
            // "null" (a sandboxed or privacy-restricted page) and garbage: not this console
        }
        if (own.equals(theirs)) {
            return null;
        }
        return "it was sent from another site (" + header + ": " + from + "; this console is " + host
                + "): a page elsewhere cannot change settings with your credentials; use the form on this page";
    }

    /** {@code host:port} in lower case, the scheme's default port filled in. */
    private static String authority(String scheme, String hostPort) {
        String hp = hostPort.strip().toLowerCase(Locale.ROOT);
        int close = hp.lastIndexOf(']'); // [::1]:8080
        boolean hasPort = hp.lastIndexOf(':') > close && (close >= 0 || hp.indexOf(':') == hp.lastIndexOf(':'));
        return hasPort ? hp : hp + ":" + ("https".equalsIgnoreCase(scheme) ? 443 : 80);
    }

    // ------------------------------------------------------------------ the page

    @Override
    public void renderContent(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
        ServiceReference<BufferManager> ref = context.getServiceReference(BufferManager.class);
        BufferManager b = ref == null ? null : context.getService(ref);
        try {
            String down = SettingsService.whyNotRunning(b);
            render(req, resp, down == null ? b : null, down == null ? "the buffer manager is not running" : down);
        } finally {
            if (b != null) {
                context.ungetService(ref);
            }
        }
    }

    private void render(HttpServletRequest req, HttpServletResponse resp, BufferManager b, String down) throws IOException {
        PrintWriter w = resp.getWriter();
        String root = appRoot(req) + "/" + LABEL;
        w.println("<div id='pageio' data-live='" + esc(root + "/live.json") + "'>");
        w.println("<style>#pageio table{border-collapse:collapse;margin:4px 0 14px}#pageio td,#pageio th{border:1px solid #ccc;"
                + "padding:2px 6px;text-align:left}#pageio td.n{text-align:right}#pageio .refused{color:#a00;font-weight:bold}"
                + "#pageio .ok{color:#060}#pageio h2{margin:14px 0 4px}"
                + "#pageio svg{background:#fafafa;border:1px solid #ccc}#pageio .pageio-series{margin:4px 0 8px}"
                // the drill result: long cells and paths wrap; a table that still does not fit scrolls itself
                + "#pageio-drill{overflow-wrap:anywhere}#pageio-drill img{max-width:100%;height:auto}"
                + "#pageio .pageio-wide{max-width:100%;overflow-x:auto}#pageio-drill table{margin:4px 0 10px}"
                + "#pageio-drill th{vertical-align:bottom;overflow-wrap:normal}#pageio-drill th.n{text-align:right}"
                + "#pageio-drill h3,#pageio-drill h4{font-weight:bold;margin:10px 0 4px}</style>");

        w.println("<h2>I/O method</h2>");
        w.println("<p>in use: <b id='pageio-method'>" + esc(b == null ? "(" + down + ")"
                : b.pool().method().name()) + "</b></p>");
        if (b != null) {
            w.println("<p>shared_buffers = " + b.settings().sharedBuffers() + " × 8kB; huge pages (huge_pages = "
                    + esc(b.settings().hugePages().value()) + "): <span id='pageio-huge-pages'>" + esc(b.pool().hugePages())
                    + "</span></p>");
        }
        table(w, "pageio-methods", methods.table());

        w.println("<h2>Settings</h2>");
        Object o = req.getAttribute(OUTCOME);
        if (o instanceof Outcome out) {
            w.println("<p id='pageio-outcome' class='" + (out.ok() ? "ok" : "refused") + "'>" + esc(out.message()) + "</p>");
        }
        SettingsService.FileReport report = settings.fileReport();
        if (report != null && !report.refused().isEmpty()) {
            w.println("<p class='refused'>refused from " + esc(report.file()) + " (the old values stay in force):</p><ul>");
            for (String r : report.refused()) {
                w.println("<li class='refused'>" + esc(r) + "</li>");
            }
            w.println("</ul>");
        }
        TextTable st = settings.table();
        w.println("<form id='pageio-set' method='post' action='" + esc(root) + "'>set <select name='name' id='pageio-set-name'>");
        for (Object[] row : st.rows()) {
            String n = TextTable.text(row[0]);
            w.println("<option value='" + esc(n) + "'>" + esc(n) + "</option>");
        }
        w.println("</select> to <input name='value' id='pageio-set-value' size='12'> <input type='hidden' name='" + TOKEN
                + "' value='" + esc(token) + "'> <input type='submit' id='pageio-set-submit'"
                + " value='Set'> (validated like pageio:set; saved in the settings file)</form>");
        table(w, "pageio-settings", st);

        w.println("<h2>stat_io</h2>");
        if (b == null) {
            w.println("<p>(" + esc(down) + ")</p>");
        } else {
            table(w, "pageio-stat-io", StatViews.statIoTable(b.pool().stats().rows()));
        }

        chart(w);

        w.println("<h2>aios <small id='pageio-aios-status'>(live)</small></h2>");
        table(w, "pageio-aios", StatViews.aiosTable(b == null ? List.of() : b.pool().aio().snapshot()));

        w.println("<h2>Last drill</h2>");
        drill(w, root);

        w.println("</div>");
        w.println(SCRIPT);
    }

    /** The live chart's series: the key the script computes per method, the element id, the title. */
    private static final String[][] CHART = {
        {"reads", "pageio-chart-reads", "reads/s"},
        {"mb", "pageio-chart-mb", "MB/s read"},
        {"wait", "pageio-chart-wait", "I/O wait, ms/s (read, write and fsync time; track_io_timing)"},
        {"inflight", "pageio-chart-inflight", "I/O handles in flight"},
    };

    /**
     * The live chart's frame, drawn by {@link #SCRIPT} from each poll of live.json: one SVG per
     * series, a line per I/O method. The box's {@code data-samples}, {@code data-reads-max} and
     * {@code data-reads-last} attributes give the numbers drawn (the browser test reads them).
     */
    private static void chart(PrintWriter w) {
        w.println("<h2>I/O per second <small>(a sample a second, the last " + CHART_SAMPLES / 60 + " minutes, per I/O method;"
                + " rates of stat_io's counters, handles from aios)</small></h2>");
        w.println("<div id='pageio-chart' data-samples='0' data-reads-max='0' data-reads-last='0'>"
                + "<p id='pageio-chart-legend'>(waiting for samples)</p>");
        for (String[] c : CHART) {
            w.println("<div class='pageio-series'><b>" + esc(c[2]) + "</b>, top <span id='" + c[1] + "-max'>0</span><br>"
                    + "<svg id='" + c[1] + "' data-series='" + c[0] + "' width='" + CHART_WIDTH + "' height='" + CHART_HEIGHT
                    + "' viewBox='0 0 " + CHART_WIDTH + " " + CHART_HEIGHT + "'></svg></div>");
        }
        w.println("</div>");
    }

    private void drill(PrintWriter w, String root) throws IOException {
        Optional<Path> svg = newestDrill(".svg");
        Optional<Path> md = newestDrill(".md");
        if (svg.isEmpty() && md.isEmpty()) {
            w.println("<p id='pageio-drill'>no drill run yet</p>");
            return;
        }
        w.println("<div id='pageio-drill'>");
        if (svg.isPresent()) {
            w.println("<p>" + esc(svg.get().toString()) + "</p><img alt='drill chart' src='" + esc(root + "/drill.svg") + "'>");
        }
        if (md.isPresent()) {
            w.println("<p>" + esc(md.get().toString()) + "</p>");
            w.println(DrillMarkdown.toHtml(Files.readString(md.get(), StandardCharsets.UTF_8)));
        }
        w.println("</div>");
    }

    /** The directories drill results may be in: {@code pageio.drill.results}, {@code <data>/drill-results}, {@code ./drill-results}. */
    private List<Path> drillDirectories() {
        List<Path> dirs = new ArrayList<>();
        String p = context.getProperty(DataDirectory.DRILL_RESULTS_PROPERTY);
        if (p != null && !p.isBlank()) {
            dirs.add(Path.of(p));
        }
        dirs.add(DataDirectory.of(context).resolve("drill-results"));
        dirs.add(Path.of("drill-results").toAbsolutePath());
        return dirs;
    }

    /** The newest {@code *.ext} among the drill result directories. */
    Optional<Path> newestDrill(String ext) throws IOException {
        List<Path> found = new ArrayList<>();
        for (Path dir : drillDirectories()) {
            if (Files.isDirectory(dir)) {
                try (Stream<Path> s = Files.list(dir)) {
                    s.filter(f -> f.getFileName().toString().endsWith(ext) && Files.isRegularFile(f)).forEach(found::add);
                }
            }
        }
        return found.stream().max(Comparator.comparing((Path f) -> {
            try {
                return Files.getLastModifiedTime(f).toMillis();
            } catch (IOException e) {
                return 0L;
            }
        }).thenComparing(f -> f.getFileName().toString()));
    }

    /** {@code {"method": …, "aios": [...], "stat_io": [...]}} for the page's polling. */
    String liveJson() {
        ServiceReference<BufferManager> ref = context.getServiceReference(BufferManager.class);
        BufferManager b = ref == null ? null : context.getService(ref);
        try {
            return liveJson(SettingsService.whyNotRunning(b) == null ? b : null);
        } finally {
            if (b != null) {
                context.ungetService(ref);
            }
        }
    }

    static String liveJson(BufferManager b) {
        return Json.inline(g -> {
            g.writeStartObject();
            if (b == null) {
                g.writeNullField("method");
                g.writeArrayFieldStart("aios");
                g.writeEndArray();
                g.writeArrayFieldStart("stat_io");
                g.writeEndArray();
            } else {
                g.writeStringField("method", b.pool().method().name());
                g.writeFieldName("aios");
                StatViews.aiosTable(b.pool().aio().snapshot()).writeJson(g);
                g.writeFieldName("stat_io");
                StatViews.statIoTable(b.pool().stats().rows()).writeJson(g);
            }
            g.writeEndObject();
        }).stripTrailing();
    }

    private static void table(PrintWriter w, String id, TextTable t) {
        w.print("<table id='" + id + "' class='nicetable'><thead><tr>");
        for (String h : t.header()) {
            w.print("<th>" + esc(h) + "</th>");
        }
        w.println("</tr></thead><tbody>");
        for (Object[] row : t.rows()) {
            w.print("<tr>");
            for (Object v : row) {
                w.print((v instanceof Number ? "<td class='n'>" : "<td>") + esc(TextTable.text(v)) + "</td>");
            }
            w.println("</tr>");
        }
        w.println("</tbody></table>");
    }

    private static String appRoot(HttpServletRequest req) {
        Object a = req.getAttribute("felix.webconsole.appRoot");
        return a == null ? req.getContextPath() + req.getServletPath() : String.valueOf(a);
    }

    static String esc(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '&' -> sb.append("&amp;");
                case '\'' -> sb.append("&#39;");
                case '"' -> sb.append("&quot;");
                default -> sb.append(c);
            }
        }
        return sb.toString();
    }

    /**
     * Polls live.json and redraws the aios and stat_io tables and the method in use; the aios
     * status line says when it last refreshed (the browser test waits for it). Each poll also adds
     * a sample to the live chart: per I/O method, the growth of stat_io's cumulative reads,
     * read_bytes and read, write and fsync time since the previous poll over the time between
     * them (a counter that went down, a reset or a restart, counts 0; a row that appeared counts
     * from 0), and the handles in aios for the method in use. The page keeps the samples; the
     * server keeps nothing.
     */
    static final String SCRIPT = """
            <script>
            (function () {
              var root = document.getElementById('pageio');
              if (!root) { return; }
              // location.origin has no user:password@ (fetch refuses URLs with credentials)
              var url = location.origin + root.getAttribute('data-live');
              function text(v) { return v === null || v === undefined ? '' : String(v); }
              function fill(id, rows) {
                var t = document.getElementById(id);
                if (!t) { return; }
                var head = [].map.call(t.tHead.rows[0].cells, function (c) { return c.textContent; });
                var body = t.tBodies[0];
                while (body.rows.length) { body.deleteRow(0); }
                rows.forEach(function (r) {
                  var tr = body.insertRow();
                  head.forEach(function (h) {
                    var td = tr.insertCell();
                    var v = r[h];
                    td.textContent = text(v);
                    if (typeof v === 'number') { td.className = 'n'; }
                  });
                });
              }
              var KEEP = %d, W = %d, H = %d;
              var COLORS = ['#36c', '#c33', '#393', '#c90', '#939', '#399', '#666', '#963']; // stat_io has 8 method slots
              var SVG = 'http://www.w3.org/2000/svg';
              var methods = []; // in the order first seen: a method keeps its colour
              var prev = null;  // {t: ms, totals: {method: {reads, bytes, wait}}}
              var samples = []; // oldest first: {method: {reads, mb, wait, inflight}}
              function totals(j) {
                var t = {};
                j.stat_io.forEach(function (r) {
                  var x = t[r.io_method] || (t[r.io_method] = {reads: 0, bytes: 0, wait: 0});
                  x.reads += r.reads;
                  x.bytes += r.read_bytes;
                  x.wait += r.read_time + r.write_time + r.fsync_time;
                });
                return t;
              }
              function sample(j) {
                var now = Date.now();
                var cur = totals(j);
                if (j.method !== null && !cur[j.method]) { cur[j.method] = {reads: 0, bytes: 0, wait: 0}; }
                Object.keys(cur).forEach(function (m) { if (methods.indexOf(m) < 0) { methods.push(m); } });
                if (prev !== null) {
                  var dt = (now - prev.t) / 1000, per = {};
                  methods.forEach(function (m) {
                    var a = cur[m] || {reads: 0, bytes: 0, wait: 0}, b = prev.totals[m] || {reads: 0, bytes: 0, wait: 0};
                    function rate(k) { return dt > 0 ? Math.max(0, a[k] - b[k]) / dt : 0; }
                    per[m] = {reads: rate('reads'), mb: rate('bytes') / 1e6, wait: rate('wait'),
                              inflight: m === j.method ? j.aios.length : 0};
                  });
                  samples.push(per);
                  if (samples.length > KEEP) { samples.shift(); }
                }
                prev = {t: now, totals: cur};
                draw();
              }
              function fmt(v) { return v >= 100 ? String(Math.round(v)) : v.toFixed(v >= 10 ? 1 : 2); }
              function draw() {
                var box = document.getElementById('pageio-chart');
                if (!box) { return; }
                [].forEach.call(box.querySelectorAll('svg[data-series]'), function (svg) {
                  var key = svg.getAttribute('data-series'), max = 0;
                  samples.forEach(function (p) { methods.forEach(function (m) { max = Math.max(max, p[m] ? p[m][key] : 0); }); });
                  while (svg.firstChild) { svg.removeChild(svg.firstChild); }
                  methods.forEach(function (m, i) {
                    var pts = samples.map(function (p, k) {
                      var v = p[m] ? p[m][key] : 0;
                      return (W * (KEEP - samples.length + k) / (KEEP - 1)).toFixed(1) + ','
                        + (H - 2 - (max > 0 ? v / max * (H - 6) : 0)).toFixed(1);
                    });
                    var line = document.createElementNS(SVG, 'polyline');
                    line.setAttribute('fill', 'none');
                    line.setAttribute('stroke-width', '1.5');
                    line.setAttribute('stroke', COLORS[i] || '#000');
                    line.setAttribute('data-method', m);
                    line.setAttribute('points', pts.join(' '));
                    svg.appendChild(line);
                  });
                  document.getElementById(svg.id + '-max').textContent = fmt(max);
                });
                var legend = document.getElementById('pageio-chart-legend');
                legend.textContent = '';
                methods.forEach(function (m, i) {
                  var span = document.createElement('span');
                  span.style.color = COLORS[i] || '#000';
                  span.style.marginRight = '12px';
                  span.textContent = '\u25a0 ' + m;
                  legend.appendChild(span);
                });
                function reads(p) { return methods.reduce(function (s, m) { return s + (p[m] ? p[m].reads : 0); }, 0); }
                box.setAttribute('data-samples', String(samples.length));
                box.setAttribute('data-reads-max', String(samples.reduce(function (s, p) { return Math.max(s, reads(p)); }, 0)));
                box.setAttribute('data-reads-last', String(samples.length ? reads(samples[samples.length - 1]) : 0));
              }
              var polls = 0;
              function poll() {
                fetch(url, {credentials: 'same-origin', cache: 'no-store'})
                  .then(function (r) { return r.json(); })
                  .then(function (j) {
                    polls++;
                    fill('pageio-aios', j.aios);
                    fill('pageio-stat-io', j.stat_io);
                    sample(j);
                    var m = document.getElementById('pageio-method');
                    if (m) { m.textContent = j.method === null ? '(the buffer manager is not running)' : j.method; }
                    document.getElementById('pageio-aios-status').textContent =
                      '(live: ' + j.aios.length + ' in flight, refresh ' + polls + ' at ' + new Date().toLocaleTimeString() + ')';
                  })
                  .catch(function (e) {
                    document.getElementById('pageio-aios-status').textContent = '(live view: ' + e + '; retrying)';
                  })
                  .finally(function () { setTimeout(poll, %d); });
              }
              poll();
            })();
            </script>
            """.formatted(CHART_SAMPLES, CHART_WIDTH, CHART_HEIGHT, POLL_MS);
}
