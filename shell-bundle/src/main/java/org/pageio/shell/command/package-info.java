/**
 * What a bundle that adds {@code pageio:} Gogo commands needs to look like the rest: the scope and\n * property names ({@link org.pageio.shell.command.Commands}) and one-line refusals with the usage\n * ({@link org.pageio.shell.command.CommandUsage}).
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.pageio.shell.command;
