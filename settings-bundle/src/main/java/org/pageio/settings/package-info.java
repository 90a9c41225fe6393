/**
 * The settings service ({@link org.pageio.settings.SettingsService}): pageio's settings with\n * PostgreSQL's names, units, sources and valid ranges over ConfigAdmin and Metatype, the settings file,\n * the registered I/O methods ({@link org.pageio.settings.MethodsTable}), the data directory and the\n * drop folder. The shell and the web side both consume it.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.pageio.settings;
