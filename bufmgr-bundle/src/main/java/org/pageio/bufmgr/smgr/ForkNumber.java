package org.pageio.bufmgr.smgr;

/**
 * A relation's forks, PostgreSQL's {@code ForkNumber} ({@code common/relpath.h}) with its numbers
 * and the names {@code relpath.c} gives them: the main fork holds the data, the free space map
 * and the visibility map are files of their own beside it ({@code <relNumber>_fsm},
 * {@code <relNumber>_vm}, segments {@code <relNumber>_vm.1}, …). pageio uses the main and the
 * visibility map fork; the free space map's and the init fork's numbers and names are here so that
 * file names and numbers match PostgreSQL's (and a PostgreSQL cluster's files can be read).
 *
 * @since 1.5.0
 */
public enum ForkNumber {
    /** The relation's data ({@code MAIN_FORKNUM}, 0): files {@code <relNumber>}, {@code <relNumber>.1}, …. */
    MAIN_FORKNUM(0, "main"),
    /** The free space map ({@code FSM_FORKNUM}, 1): files {@code <relNumber>_fsm}, …. Not used by pageio yet. */
    FSM_FORKNUM(1, "fsm"),
    /** The visibility map ({@code VISIBILITYMAP_FORKNUM}, 2): files {@code <relNumber>_vm}, …. */
    VISIBILITYMAP_FORKNUM(2, "vm"),
    /**
     * An unlogged relation's initial content ({@code INIT_FORKNUM}, 3): files {@code <relNumber>_init}.
     * Not used by pageio's tables; PostgreSQL checksums its pages as any other fork's.
     *
     * @since 1.6.0
     */
    INIT_FORKNUM(3, "init");

    private final int number;
    private final String forkName;

    ForkNumber(int number, String forkName) {
        this.number = number;
        this.forkName = forkName;
    }

    /** PostgreSQL's number of the fork. */
    public int number() {
        return number;
    }

    /** PostgreSQL's name of the fork ({@code forkNames[]}): {@code main}, {@code fsm}, {@code vm}, {@code init}. */
    public String forkName() {
        return forkName;
    }

    /** The first segment file's name for relation number {@code relNumber}: {@code 16384}, {@code 16384_vm}. */
    public String fileName(long relNumber) {
        return this == MAIN_FORKNUM ? Long.toString(relNumber) : relNumber + "_" + forkName;
    }

    /**
     * The fork a file name's fork part names ({@code forkname_to_number}: {@code "vm"} is
     * {@link #VISIBILITYMAP_FORKNUM}), or null when it names none.
     *
     * @since 1.6.0
     */
    public static ForkNumber byName(String forkName) {
        for (ForkNumber f : values()) {
            if (f.forkName.equals(forkName)) {
                return f;
            }
        }
        return null;
    }
}
