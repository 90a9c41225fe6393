/** The storage manager: relation files in 8 KiB blocks and segments, tablespaces, starting reads. */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.2.0")
package org.pageio.bufmgr.smgr;
