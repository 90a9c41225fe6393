package org.pageio.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The page's "Last drill" from a real drill result: {@code drill-result.md} was written by {@code ./pageio drill
 * --rows 20000 --rounds 1 --no-fio}. Its tables become HTML tables, not preformatted text.
 */
class DrillMarkdownTest {

    @Test
    void aRealDrillResultBecomesTablesHeadingsParagraphsAndAList() throws Exception {
        String md = fixture();
        String html = DrillMarkdown.toHtml(md);
        assertFalse(html.contains("<pre"), html);
        Element root = parse(html);

        NodeList tables = root.getElementsByTagName("table");
        long pipeTables = md.lines().filter(l -> l.startsWith("| method |") || l.startsWith("| case |")).count();
        assertEquals(11, pipeTables, "the fixture's tables: 10 cases and every run");
        assertEquals(pipeTables, tables.getLength(), html);
        for (int t = 0; t < tables.getLength(); t++) {
            Element table = (Element) tables.item(t);
            assertEquals("nicetable", table.getAttribute("class"), "styled like the page's other tables");
            assertEquals("pageio-wide", ((Element) table.getParentNode()).getAttribute("class"));
            assertFalse(text(table, "td").stream().anyMatch(c -> c.contains("|") || c.matches("-{3,}:?")),
                    "no pipes and no delimiter row left in the cells");
        }
        Element first = (Element) tables.item(0);
        assertEquals(List.of("method", "execution ms", "I/O wait ms", "min–max ms", "MB/s", "bytes/read", "shared hit",
                "speed vs sync", "vs best Java", "vs fio", "CPU ms", "CPU µs/block", "dev kB/read", "dev depth", "runs counted"),
                text(first, "th"));
        List<String> sync = text((Element) first.getElementsByTagName("tr").item(1), "td");
        assertEquals(15, sync.size(), sync.toString());
        assertEquals("sync", sync.get(0));
        assertEquals(6, first.getElementsByTagName("tbody").item(0).getChildNodes().getLength()
                - blankNodes(first.getElementsByTagName("tbody").item(0).getChildNodes()), "six methods and baselines");
        Element cell = (Element) ((Element) first.getElementsByTagName("tr").item(1)).getElementsByTagName("td").item(1);
        assertEquals("n", cell.getAttribute("class"), "a ---: column is numeric, right-aligned as the page's numbers");
        assertEquals("", ((Element) ((Element) first.getElementsByTagName("tr").item(1)).getElementsByTagName("td").item(0))
                .getAttribute("class"));

        Element last = (Element) tables.item(tables.getLength() - 1);
        assertEquals(List.of("case", "method", "round", "execution ms", "I/O wait ms", "reads", "read bytes", "shared hit",
                "residency before", "counted"), text(last, "th"));

        List<String> h3 = text(root, "h3");
        assertEquals(1, h3.size());
        assertTrue(h3.get(0).startsWith("pageio drill, "), h3.toString());
        List<String> h4 = text(root, "h4");
        assertEquals("count(*) of t, cold, effective_io_concurrency=1", h4.get(0));
        assertTrue(h4.containsAll(List.of("Notes", "What it says", "Every run")), h4.toString());
        List<String> items = text(root, "li");
        assertEquals(md.lines().filter(l -> l.startsWith("- ")).count(), items.size());
        assertTrue(items.stream().anyMatch(i -> i.startsWith("For this storage, choose io_method=")), items.toString());
        assertTrue(text(root, "p").stream().anyMatch(p -> p.startsWith("Cold: before each cold run")));
    }

    @Test
    void textIsEscapedPipesInCellsKeptAndTablesWithoutADelimiterRowStillTables() throws Exception {
        String html = DrillMarkdown.toHtml("""
                # a <b> & `x<y`
                | name | <i>value</i> |
                | a \\| b | 1 |

                plain <script>alert(1)</script>
                continued
                """);
        assertFalse(html.contains("<script>") || html.contains("<i>") || html.contains("<b>"), html);
        Element root = parse(html);
        assertEquals(List.of("a <b> & x<y"), text(root, "h3"));
        assertEquals("x<y", text(root, "code").get(0));
        assertEquals(List.of("name", "<i>value</i>"), text(root, "th"));
        assertEquals(List.of("a | b", "1"), text(root, "td"));
        assertEquals(List.of("plain <script>alert(1)</script> continued"), text(root, "p"));
    }

    private static String fixture() throws IOException {
        try (InputStream in = DrillMarkdownTest.class.getResourceAsStream("drill-result.md")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The HTML as XML (it is written well-formed), under one root element. */
    private static Element parse(String html) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(("<div>" + html + "</div>").getBytes(StandardCharsets.UTF_8)))
                .getDocumentElement();
    }

    private static List<String> text(Element e, String tag) {
        List<String> out = new ArrayList<>();
        NodeList n = e.getElementsByTagName(tag);
        for (int i = 0; i < n.getLength(); i++) {
            out.add(n.item(i).getTextContent());
        }
        return out;
    }

    private static int blankNodes(NodeList n) {
        int blank = 0;
        for (int i = 0; i < n.getLength(); i++) {
            blank += n.item(i) instanceof Element ? 0 : 1;
        }
        return blank;
    }
}
