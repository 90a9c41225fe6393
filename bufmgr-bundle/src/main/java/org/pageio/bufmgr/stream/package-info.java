/** Read streams: look-ahead and I/O combining over the buffer manager's two-phase reads. */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("3.1.0")
package org.pageio.bufmgr.stream;
