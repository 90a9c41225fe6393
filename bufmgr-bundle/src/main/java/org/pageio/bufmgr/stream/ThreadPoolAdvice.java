package org.pageio.bufmgr.stream;

/**
 * A pageio look-ahead policy: <b>advice ahead of a pool of I/O threads</b>. PostgreSQL's read
 * stream gives {@code posix_fadvise(WILLNEED)} advice only under {@code io_method=sync}, where it is
 * the only way to have reads in flight. A method whose every read holds one of a bounded set of
 * threads while in flight ({@code IoMethod.readsHoldThreads()}: {@code io_method=worker}'s blocking
 * {@code preadv} in each I/O worker) has the same limit in another form: the device sees at most as
 * many reads as there are threads, however far the stream looks ahead. So such a stream gives the
 * same advice as under {@code sync}, on the same jumps (not {@link ReadStream#SEQUENTIAL}, where the
 * kernel's read-ahead serves, and not under direct I/O, where advice does nothing): the kernel
 * starts the reads the threads have not reached yet, and a thread that reaches one finds its pages
 * in the page cache or on their way.
 *
 * <p>why: docs/performance.md, "The default method on random reads". Stateless: the stream keeps
 * its advice state ({@code adviceEnd}) as under {@code sync}.
 */
final class ThreadPoolAdvice {

    private ThreadPoolAdvice() {
    }

    /**
     * Whether a stream whose method's reads hold threads ({@code readsHoldThreads}) gives advice:
     * only where PostgreSQL's rule would under {@code sync}, buffered and not sequential.
     */
    static boolean applies(boolean readsHoldThreads, boolean direct, boolean sequential) {
        return readsHoldThreads && !direct && !sequential;
    }
}
