/** The DS component that registers the table service. Private. */
package org.pageio.table.internal;
