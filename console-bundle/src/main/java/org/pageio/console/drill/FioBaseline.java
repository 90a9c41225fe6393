package org.pageio.console.drill;

import java.io.File;

/** fio as a baseline: so far only whether it is installed (running it is a TODO of issue 9). */
final class FioBaseline {

    private FioBaseline() {
    }

    /** Where fio is on PATH, or null. */
    static String path() {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            File f = new File(dir, "fio");
            if (f.isFile() && f.canExecute()) {
                return f.getAbsolutePath();
            }
        }
        return null;
    }

    /** One line for the report. */
    static String note() {
        String p = path();
        return p == null ? "fio is not installed (apt-get install fio), so there is no fio baseline"
                : "fio is installed (" + p + ") but the drill does not run it yet";
    }
}
