package org.pageio.table.catalog;

import java.io.IOException;
import java.io.StringReader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.pageio.table.IndexInfo;
import org.pageio.table.TableException;
import org.pageio.table.TableInfo;
import org.pageio.table.TableShape;
import org.pageio.table.TupleStats;

/**
 * The catalog: {@code <data>/catalog.properties}, one {@code key=value} per line, sorted:
 * <pre>
 * next_relnumber=16386
 * table.t.relnumber=16384     table.t.shape=t   table.t.rows=…   table.t.seed=…   table.t.blocks=…
 * index.t.id.relnumber=16385  index.t.id.entries=…  index.t.id.blocks=…  index.t.id.height=…
 * index.p.cat,val.relnumber=…                      (an index on two columns: its columns, comma-separated)
 * table.t.n_live_tup=…  table.t.n_dead_tup=…    (after the first row change; before it: rows and 0)
 * </pre>
 * Every change rewrites the whole file to {@code catalog.properties.tmp}, fsyncs it and renames
 * it over the old one (atomic on POSIX), then fsyncs the directory. Relation numbers start at
 * 16384 (PostgreSQL's FirstNormalObjectId) and are never reused. Names are checked against
 * {@code [a-z_][a-z0-9_]{0,62}}, so no name is ever a path.
 *
 * <p>Thread-safe: every method is synchronized; the file is read once, at construction.
 */
public final class Catalog {

    public static final String FILE = "catalog.properties";
    static final long FIRST_RELNUMBER = 16384;
    private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

    private final Path file;
    private final TreeMap<String, String> props = new TreeMap<>();

    public Catalog(Path dataDirectory) throws IOException {
        this.file = dataDirectory.resolve(FILE);
        try {
            Properties p = new Properties();
            p.load(new StringReader(Files.readString(file, StandardCharsets.UTF_8)));
            for (String k : p.stringPropertyNames()) {
                props.put(k, p.getProperty(k));
            }
        } catch (NoSuchFileException e) {
            // a new catalog
        } catch (IOException | IllegalArgumentException e) {
            throw new TableException("could not read the catalog " + file + ": " + e.getMessage(), e);
        }
    }

    public Path file() {
        return file;
    }

    /** Checks a table or column name; the message says what is allowed. */
    public static String checkName(String what, String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid " + what + " name \"" + name
                    + "\": use 1 to 63 of a-z, 0-9 and _, not starting with a digit");
        }
        return name;
    }

    public synchronized List<TableInfo> tables() {
        TreeSet<String> names = new TreeSet<>();
        for (String k : props.keySet()) {
            if (k.startsWith("table.") && k.endsWith(".relnumber")) {
                names.add(k.substring(6, k.length() - 10));
            }
        }
        List<TableInfo> out = new ArrayList<>();
        for (String n : names) {
            out.add(table(n));
        }
        return out;
    }

    /** The table, or null. */
    public synchronized TableInfo table(String name) {
        checkName("table", name);
        String p = "table." + name + ".";
        if (!props.containsKey(p + "relnumber")) {
            return null;
        }
        TableShape shape = TableShape.byName(props.get(p + "shape"));
        List<IndexInfo> idx = new ArrayList<>();
        String ip = "index." + name + ".";
        for (String k : props.keySet()) {
            if (k.startsWith(ip) && k.endsWith(".relnumber")) {
                String cols = k.substring(ip.length(), k.length() - 10);
                String q = ip + cols + ".";
                List<String> columns = List.of(cols.split(","));
                idx.add(new IndexInfo(indexName(name, columns), columns.get(0), num(q + "relnumber"), num(q + "entries"),
                        num(q + "blocks"), (int) num(q + "height"), columns));
            }
        }
        return new TableInfo(name, num(p + "relnumber"), shape, num(p + "rows"), num(p + "seed"), num(p + "blocks"), idx);
    }

    /** {@code n_live_tup} and {@code n_dead_tup} of a table: the rows loaded and 0 until a row changed. */
    public synchronized TupleStats tupleStats(String name) {
        String p = "table." + checkName("table", name) + ".";
        if (!props.containsKey(p + "n_live_tup")) {
            return new TupleStats(num(p + "rows"), 0);
        }
        return new TupleStats(num(p + "n_live_tup"), num(p + "n_dead_tup"));
    }

    /** Adds to a table's {@code n_live_tup} and {@code n_dead_tup} and saves the catalog. */
    public synchronized void addTupleStats(String name, long live, long dead) throws IOException {
        TupleStats s = tupleStats(name);
        String p = "table." + name + ".";
        props.put(p + "n_live_tup", Long.toString(s.nLiveTup() + live));
        props.put(p + "n_dead_tup", Long.toString(s.nDeadTup() + dead));
        save();
    }

    /** Sets a table's {@code n_live_tup} and {@code n_dead_tup} (what VACUUM counted) and saves the catalog. */
    public synchronized void setTupleStats(String name, long live, long dead) throws IOException {
        String p = "table." + checkName("table", name) + ".";
        props.put(p + "n_live_tup", Long.toString(live));
        props.put(p + "n_dead_tup", Long.toString(dead));
        save();
    }

    /** Reserves a relation number (persisted at once, so a crash never reuses it). */
    public synchronized long allocateRelNumber() throws IOException {
        long n = props.containsKey("next_relnumber") ? num("next_relnumber") : FIRST_RELNUMBER;
        props.put("next_relnumber", Long.toString(n + 1));
        save();
        return n;
    }

    public synchronized void putTable(TableInfo t) throws IOException {
        String p = "table." + checkName("table", t.name()) + ".";
        props.put(p + "relnumber", Long.toString(t.relNumber()));
        props.put(p + "shape", t.shape().shapeName());
        props.put(p + "rows", Long.toString(t.rows()));
        props.put(p + "seed", Long.toString(t.seed()));
        props.put(p + "blocks", Long.toString(t.blocks()));
        save();
    }

    /** PostgreSQL's default index name: {@code <table>_<column>[_<column>]_idx}. */
    public static String indexName(String table, List<String> columns) {
        return table + "_" + String.join("_", columns) + "_idx";
    }

    public synchronized void putIndex(String table, IndexInfo i) throws IOException {
        for (String c : i.columns()) {
            checkName("column", c);
        }
        String p = "index." + checkName("table", table) + "." + String.join(",", i.columns()) + ".";
        props.put(p + "relnumber", Long.toString(i.relNumber()));
        props.put(p + "entries", Long.toString(i.entries()));
        props.put(p + "blocks", Long.toString(i.blocks()));
        props.put(p + "height", Integer.toString(i.height()));
        save();
    }

    /**
     * Records a table's heap blocks and its indexes' entries, blocks and height (after row changes
     * appended pages and entries) in one write.
     */
    public synchronized void putSizes(String table, long blocks, java.util.List<IndexInfo> indexes) throws IOException {
        String p = "table." + checkName("table", table) + ".";
        if (!props.containsKey(p + "relnumber")) {
            throw new TableException("table \"" + table + "\" does not exist");
        }
        props.put(p + "blocks", Long.toString(blocks));
        for (IndexInfo i : indexes) {
            String q = "index." + table + "." + String.join(",", i.columns()) + ".";
            props.put(q + "entries", Long.toString(i.entries()));
            props.put(q + "blocks", Long.toString(i.blocks()));
            props.put(q + "height", Integer.toString(i.height()));
        }
        save();
    }

    public synchronized void removeTable(String name) throws IOException {
        checkName("table", name);
        props.keySet().removeIf(k -> k.startsWith("table." + name + ".") || k.startsWith("index." + name + "."));
        save();
    }

    private long num(String key) {
        String v = props.get(key);
        if (v == null) {
            throw new IllegalStateException("catalog " + file + " has no " + key);
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalStateException("catalog " + file + ": " + key + " = \"" + v + "\" is not a number");
        }
    }

    private void save() throws IOException {
        StringBuilder b = new StringBuilder("# pageio catalog: table and index names -> relation numbers. Written atomically.\n");
        props.forEach((k, v) -> b.append(k).append('=').append(v).append('\n'));
        Path tmp = file.resolveSibling(FILE + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(b.toString().getBytes(StandardCharsets.UTF_8)));
            ch.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException e) {
            // some file systems cannot fsync a directory; the rename itself is atomic
        }
    }
}
