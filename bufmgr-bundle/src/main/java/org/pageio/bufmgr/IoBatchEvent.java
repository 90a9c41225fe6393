package org.pageio.bufmgr;

import java.util.List;
import jdk.jfr.AnnotationElement;
import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.EventFactory;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;
import jdk.jfr.ValueDescriptor;

/**
 * The JDK Flight Recorder event {@value #NAME}: one per completed read I/O of the buffer manager (a
 * combined read of up to {@code io_combine_limit} blocks: one batch of blocks), with the method,
 * the operation, the relation, blocks, bytes, latency (staged to completed) and status. The event's
 * duration is the same span (begun at staging, committed at completion), so a recording's
 * {@code threshold} for it keeps only the reads slower than that ({@code app/pageio.jfc}: 10 ms).
 *
 * <p>Disabled by default ({@code @Enabled(false)}); a recording switches it on at run time, no
 * restart: {@code jcmd <pid> JFR.start +org.pageio.IoBatch#enabled=true filename=io.jfr}, or a
 * {@code jdk.jfr.Recording} with {@code enable("org.pageio.IoBatch")}. When disabled the read
 * path pays, per I/O, one volatile read ({@link FlightRecorder#isInitialized()}) at staging, and
 * once anything in the JVM has recorded one call to {@link EventType#isEnabled()}, and one null
 * check at completion: no time stamp, no allocation.
 *
 * <p>The event type is made with {@link EventFactory} rather than as a subclass of
 * {@link Event}: a subclass is instrumented with references to {@code jdk.jfr.internal} classes,
 * which an OSGi bundle class loader cannot see; a factory event is defined by JFR itself. The
 * factory is created once per JVM (holder class), so a restarted buffer manager reuses it.
 */
final class IoBatchEvent {

    static final String NAME = "org.pageio.IoBatch";

    private static final int METHOD = 0;
    private static final int OPERATION = 1;
    private static final int RELATION = 2;
    private static final int BLOCKS = 3;
    private static final int BYTES = 4;
    private static final int LATENCY = 5;
    private static final int STATUS = 6;

    /**
     * The event type, made on first use: creating it initializes JFR's metadata, a cost a JVM that
     * never records must not pay at its first read (docs/performance.md, "The first query of a
     * fresh container").
     */
    private static final class Type {
        static final EventFactory FACTORY = EventFactory.create(List.of(
                new AnnotationElement(Name.class, NAME),
                new AnnotationElement(Label.class, "pageio I/O batch"),
                new AnnotationElement(Description.class, "A completed read I/O of the buffer manager (one combined read)"),
                new AnnotationElement(Category.class, new String[] {"pageio"}),
                new AnnotationElement(Enabled.class, false),
                new AnnotationElement(StackTrace.class, false)), List.of(
                new ValueDescriptor(String.class, "method", List.of(new AnnotationElement(Label.class, "I/O Method"))),
                new ValueDescriptor(String.class, "operation", List.of(new AnnotationElement(Label.class, "Operation"))),
                new ValueDescriptor(String.class, "relation", List.of(new AnnotationElement(Label.class, "Relation"))),
                new ValueDescriptor(int.class, "blocks", List.of(new AnnotationElement(Label.class, "Blocks"))),
                new ValueDescriptor(long.class, "bytes", List.of(new AnnotationElement(Label.class, "Bytes"),
                        new AnnotationElement(DataAmount.class, DataAmount.BYTES))),
                new ValueDescriptor(long.class, "latency", List.of(new AnnotationElement(Label.class, "Latency"),
                        new AnnotationElement(Description.class, "From staging to completion"),
                        new AnnotationElement(Timespan.class, Timespan.NANOSECONDS))),
                new ValueDescriptor(String.class, "status", List.of(new AnnotationElement(Label.class, "Status")))));

        static final EventType TYPE = FACTORY.getEventType();

        private Type() {
        }
    }

    private IoBatchEvent() {
    }

    /**
     * Whether a recording has the event on. Any thread; no allocation. Until JFR is initialized (a
     * recording started, in process or by {@code jcmd}), no recording can have it on: the type is
     * not made; made later, it takes the running recordings' settings as it registers.
     */
    static boolean enabled() {
        return FlightRecorder.isInitialized() && Type.TYPE.isEnabled();
    }

    /** A new event begun now, when its I/O is staged (allocates: only called while enabled); null if JFR refuses. */
    static Event begin() {
        try {
            Event e = Type.FACTORY.newEvent();
            e.begin();
            return e;
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Fills and commits event {@code e} from {@link #begin()}: its duration ends now. Never throws. */
    static void commit(Event e, String method, String operation, String relation, int blocks, long bytes, long latencyNanos,
            String status) {
        try {
            e.set(METHOD, method);
            e.set(OPERATION, operation);
            e.set(RELATION, relation);
            e.set(BLOCKS, blocks);
            e.set(BYTES, bytes);
            e.set(LATENCY, latencyNanos);
            e.set(STATUS, status);
            e.commit();
        } catch (RuntimeException ignore) {
            // a recording that ends meanwhile must not disturb a completion path
        }
    }
}
