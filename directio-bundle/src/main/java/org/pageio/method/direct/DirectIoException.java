package org.pageio.method.direct;

/** Why direct I/O refused an I/O before the kernel saw it; kept as the I/O's failure. */
final class DirectIoException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    DirectIoException(String message) {
        super(message, null, false, false);
    }

    @Override
    public String toString() {
        return getMessage();
    }
}
