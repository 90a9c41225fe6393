package org.pageio.table;

/**
 * A block the checksum scan rejected.
 *
 * @param relation the relation ({@code pg_default/16384})
 * @param block    its number
 * @param message  what is wrong, one line
 */
public record BadBlock(String relation, long block, String message) {
}
