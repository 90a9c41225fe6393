package org.pageio.table;

import java.io.IOException;

/** A table operation failed; the message is one line naming the table, relation and block where known. */
public final class TableException extends IOException {

    private static final long serialVersionUID = 1L;

    public TableException(String message) {
        super(message);
    }

    public TableException(String message, Throwable cause) {
        super(message, cause);
    }
}
