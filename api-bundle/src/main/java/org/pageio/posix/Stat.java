package org.pageio.posix;

/**
 * What {@link Posix#fstat} reports of a file. Immutable and thread-safe.
 *
 * @param size    {@code st_size}, in bytes
 * @param mode    {@code st_mode}: file type and permission bits
 * @param blksize {@code st_blksize}, the preferred I/O size
 * @param blocks  {@code st_blocks}, allocated 512-byte blocks
 * @param dev     {@code st_dev}, the device holding the file
 * @param ino     {@code st_ino}, the inode number
 */
public record Stat(long size, int mode, long blksize, long blocks, long dev, long ino) {
}
