package org.pageio.measure.fio;

import java.io.IOException;

/** fio is missing, failed, or its output lacks a figure; the message is one line saying which and how. */
public final class FioException extends IOException {

    private static final long serialVersionUID = 1L;

    public FioException(String message) {
        super(message);
    }
}
